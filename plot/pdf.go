package plot

import (
	"bytes"
	"image"
	"image/color"
	"io"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/vg/draw"
)

// pdfDPI is the resolution of a figure in a PDF: print quality.
const pdfDPI = 300

// writePDF writes the figure as a one-page PDF of its natural size, laid
// out by go-pdf/fpdf: the figure drawn as a PNG at pdfDPI, the PDF titled
// with the figure's title. (gonum's own PDF backend, vgpdf, draws vectors
// but garbles a second font face, encodes text in cp1252 without arrows,
// darkens translucent colours and makes its fonts in TMPDIR; the SVG
// format is the figure in vectors.)
func (f Chart) writePDF(w io.Writer) error {
	var img bytes.Buffer
	c := f.pdfCanvas()
	f.Draw(draw.New(c))
	if _, err := c.WriteTo(&img); err != nil {
		return err
	}
	wd, ht := f.Width.Points(), f.Height.Points()
	pdf := fpdf.NewCustom(&fpdf.InitType{OrientationStr: "P", UnitStr: "pt", Size: fpdf.SizeType{Wd: wd, Ht: ht}})
	pdf.SetMargins(0, 0, 0)
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetTitle(f.Title, true)
	pdf.SetAuthor("p2pbench", true)
	pdf.SetCreator("p2pbench", true)
	pdf.AddPage()
	opt := fpdf.ImageOptions{ImageType: "PNG"}
	pdf.RegisterImageOptionsReader(f.Name, opt, &img)
	pdf.ImageOptions(f.Name, 0, 0, wd, ht, false, opt, 0, "")
	return pdf.Output(w)
}

// pdfCanvas is the canvas of the figure's image in its PDF: drawn at
// pdfDPI on an image made for it, with the pixels vgimg.NewWith(UseWH,
// UseDPI) gives (which made one, copied it into another and painted that
// white), and encoded as the PNG figures are, at the encoder's fastest
// compression (files some 5 % larger than at its default, for less CPU:
// at 300 DPI an image has four times a PNG figure's pixels).
func (f Chart) pdfCanvas() fastPNG {
	return fastPNG{Canvas: newImageCanvasAt(image.NewRGBA(imageBounds(f.Width, f.Height, pdfDPI)), color.White, pdfDPI)}
}
