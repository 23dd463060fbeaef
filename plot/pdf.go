package plot

import (
	"fmt"
	"image/color"
	"io"
	"strings"

	xfont "golang.org/x/image/font"
	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// PDFCanvas is a vgpdf canvas that draws text and translucent colours
// correctly. vgpdf (gonum/plot v0.17) has four problems it works around:
//
//   - every font it embeds is generated from a file named font.ttf, and
//     the PDF library files embedded fonts by that name, so a second face
//     (bold, or another family) is drawn with the first face's glyphs and
//     its own widths: garbled text. PDFCanvas draws every string with one
//     face, Liberation Sans Regular, and makes bold by overstriking;
//   - it generates a font anew (through temporary files) for every size of
//     every face: PDFCanvas uses one size and scales the canvas instead, so
//     a document generates its font once;
//   - its fonts use the cp1252 code page but it passes strings on as UTF-8:
//     PDFCanvas encodes them in cp1252, with ASCII stand-ins for the few
//     characters outside it (arrows, ≥);
//   - it passes premultiplied colour components on as straight ones, so a
//     translucent colour comes out too dark: PDFCanvas un-premultiplies;
//   - it panics when it cannot generate its font (which it does through a
//     temporary directory in os.TempDir, so an unusable TMPDIR is enough):
//     PDFCanvas stops drawing text then, and WriteTo returns the error.
//
// Text meant for a PDF should therefore use the sans face: other faces are
// measured as themselves but drawn as it.
type PDFCanvas struct {
	*vgpdf.Canvas
	face font.Face
	// fontErr is why vgpdf could not make the font, once it could not.
	fontErr *error
}

// pdfFontSize is the one size PDFCanvas asks vgpdf for.
const pdfFontSize = 10

// NewPDFCanvas returns a PDF canvas of one page of the given size; NextPage
// adds pages of the same size.
func NewPDFCanvas(w, h vg.Length) PDFCanvas {
	c := vgpdf.New(w, h)
	c.EmbedFonts(true)
	return PDFCanvas{Canvas: c, face: font.DefaultCache.Lookup(sans, pdfFontSize), fontErr: new(error)}
}

// WriteTo writes the PDF to w, or returns why its font could not be made.
func (c PDFCanvas) WriteTo(w io.Writer) (int64, error) {
	if err := *c.fontErr; err != nil {
		return 0, err
	}
	return c.Canvas.WriteTo(w)
}

// fillString draws s with vgpdf and turns its panic over the font into
// c.fontErr, after which it draws no more text; any other panic goes on.
func (c PDFCanvas) fillString(pt vg.Point, s string) {
	if *c.fontErr != nil {
		return
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if msg, ok := r.(string); ok && strings.HasPrefix(msg, "vgpdf:") {
			*c.fontErr = fmt.Errorf("%s (the PDF's font is made in a temporary directory: is TMPDIR writable?)", msg)
			return
		}
		panic(r)
	}()
	c.Canvas.FillString(c.face, pt, s)
}

// FillString implements vg.Canvas.
func (c PDFCanvas) FillString(f font.Face, pt vg.Point, s string) {
	if f.Font.Size == 0 || s == "" {
		return
	}
	s = toCP1252(s)
	k := float64(f.Font.Size / pdfFontSize)
	draw := func(dx vg.Length) {
		c.Push()
		c.Translate(vg.Point{X: pt.X + dx, Y: pt.Y})
		c.Scale(k, k)
		c.fillString(vg.Point{}, s)
		c.Pop()
	}
	draw(0)
	if f.Font.Weight >= xfont.WeightSemiBold {
		// A fraction of a point: enough to read as bold, little enough
		// that translucent text (watermarks) does not double.
		draw(min(f.Font.Size/28, 0.5))
	}
}

// SetColor implements vg.Canvas.
func (c PDFCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	n := color.NRGBA64Model.Convert(clr).(color.NRGBA64)
	c.Canvas.SetColor(straightAlpha(n))
}

// straightAlpha reports its components unpremultiplied, breaking the
// color.Color contract on purpose: it is what vgpdf passes to the PDF.
type straightAlpha color.NRGBA64

func (s straightAlpha) RGBA() (r, g, b, a uint32) {
	return uint32(s.R), uint32(s.G), uint32(s.B), uint32(s.A)
}

// asciiStandIns replace characters cp1252 lacks.
var asciiStandIns = strings.NewReplacer(
	"→", "->", "←", "<-", "↔", "<->", "≥", ">=", "≤", "<=", "≈", "~", "−", "-", "✗", "x", "✓", "v", "▨", "#",
)

// toCP1252 encodes s in cp1252 (what vgpdf's fonts expect), with stand-ins
// for what it cannot encode.
func toCP1252(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	s = asciiStandIns.Replace(s)
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := charmap.Windows1252.EncodeRune(r); ok {
			out = append(out, b)
		} else {
			out = append(out, '?')
		}
	}
	return string(out)
}
