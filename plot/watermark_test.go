package plot

import (
	"bytes"
	"image"
	"image/color"
	imagedraw "image/draw"
	"testing"
)

// TestWatermarkPaintsTheWordOnly holds the watermark painted through the
// word's bounds alone (mark.word) to the mask painted over the whole page:
// the same pixels, and the bounds those of the word.
func TestWatermarkPaintsTheWordOnly(t *testing.T) {
	shared := &pngShared{}
	page := shared.image(3*72, 2*72) // 3 × 2 in at PNGDPI
	m := shared.watermark(page)
	<-m.done
	if m.word.Empty() || m.word == m.mask.Rect {
		t.Fatalf("the word's bounds %v in a page of %v", m.word, m.mask.Rect)
	}
	for y := m.mask.Rect.Min.Y; y < m.mask.Rect.Max.Y; y++ {
		for x := m.mask.Rect.Min.X; x < m.mask.Rect.Max.X; x++ {
			if m.mask.AlphaAt(x, y).A != 0 && !image.Pt(x, y).In(m.word) {
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
	imagedraw.DrawMask(whole, whole.Bounds(), image.NewUniform(withAlpha(alertRed, 0.18)), image.Point{}, m.mask, m.mask.Rect.Min, imagedraw.Over)
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
}
