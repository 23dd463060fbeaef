package plot

import (
	"bytes"
	"image"
	"image/color"
	imagedraw "image/draw"
	"testing"
)

// TestWatermarkPaintsTheWordOnly holds the watermark painted through the
// word's bounds alone (mark.word, the part of the mask kept) to the mask
// painted over the whole page: the same pixels, and the bounds those of
// the word.
func TestWatermarkPaintsTheWordOnly(t *testing.T) {
	shared := &pngShared{}
	page := shared.image(3*72, 2*72) // 3 × 2 in at PNGDPI
	m := shared.watermark(page)
	<-m.done
	full := markMask(image.NewRGBA(page.Rect)) // the whole page's mask
	if m.word.Empty() || m.word == full.Rect {
		t.Fatalf("the word's bounds %v in a page of %v", m.word, full.Rect)
	}
	for y := full.Rect.Min.Y; y < full.Rect.Max.Y; y++ {
		for x := full.Rect.Min.X; x < full.Rect.Max.X; x++ {
			if full.AlphaAt(x, y).A != 0 && !image.Pt(x, y).In(m.word) {
				t.Fatalf("the word's pixel %d,%d lies outside its bounds %v", x, y, m.word)
			}
		}
	}
	// A page of every colour, painted both ways.
	whole := image.NewRGBA(page.Rect)
	for i := range whole.Pix {
		whole.Pix[i] = uint8(i * 7)
	}
	word := &image.RGBA{Pix: bytes.Clone(whole.Pix), Stride: whole.Stride, Rect: whole.Rect}
	imagedraw.DrawMask(whole, whole.Bounds(), image.NewUniform(withAlpha(alertRed, 0.18)), image.Point{}, full, full.Rect.Min, imagedraw.Over)
	c := fastPNG{Canvas: newImageCanvas(word, color.White), mark: m}
	for i := range word.Pix {
		word.Pix[i] = uint8(i * 7)
	}
	if !c.watermark() {
		t.Fatal("no watermark painted")
	}
	if !bytes.Equal(word.Pix, whole.Pix) {
		t.Error("the watermark painted through the word's bounds differs from the one painted over the page")
	}
	// Another set of figures of the size gets the mark drawn: it is not
	// drawn again.
	if again := (&pngShared{}).watermark(shared.image(3*72, 2*72)); again != m {
		t.Error("the watermark of a size drawn again for another set of figures")
	}
}
