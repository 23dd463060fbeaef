package plot

import (
	"bytes"
	"image"
	"math"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestPDFImageAsVgimgDraws holds the image of a figure's PDF, drawn on an
// image made for it (pdfCanvas), to the one vgimg.NewWith(UseWH,
// UseDPI) makes and draws, pixel for pixel, for a simulated figure (the
// watermark). The figures' sizes are whole pixels at pdfDPI; at another
// size the figure would be drawn to the image's whole pixels (its width a
// fraction of a pixel off), as the PNG figures are.
func TestPDFImageAsVgimgDraws(t *testing.T) {
	grid := FleetGrid{
		Rows:    []string{"node0001", "node0002", "node0003"},
		Columns: []string{"CE read 512 MiB · NVLink ×18", "host→device 512 MiB · host"},
		Cells:   [][]float64{{-15, 0.2}, {0.1, math.NaN()}, {30, -0.3}},
		Flagged: [][]bool{{true, false}, {false, false}, {true, false}},
	}
	f := FleetHeatmap("fleet_heatmap", "Deviation from the median", "3 nodes", grid, []string{"caption"}, true)
	f.Width, f.Height = 3*vg.Inch, 2*vg.Inch // small: the test draws it twice at pdfDPI
	want := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(pdfDPI))
	f.Draw(draw.New(vgimg.PngCanvas{Canvas: want}))
	got := f.pdfCanvas()
	f.Draw(draw.New(got))
	w, g := want.Image().(*image.RGBA), got.Image().(*image.RGBA)
	if w.Rect != g.Rect || !bytes.Equal(w.Pix, g.Pix) {
		t.Errorf("the PDF's image (%v) differs from vgimg's (%v)", g.Rect, w.Rect)
	}
}
