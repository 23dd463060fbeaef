// Package plot draws p2pbench's figures from a results.Run: bandwidth
// heatmaps, bandwidth against transfer size, throughput against the driver's
// performance rank, latency distributions and atomic throughput. Every figure
// carries a caption naming the machine and software it was measured on, and a
// SIMULATED watermark when the run is not a measurement.
//
// Which figures a run gets, and their titles, come from the results
// catalogue (which tests make matrices, which copy both ways, which repeat
// a test across processes); no test name is spelt out here. The package
// reads results only: it never imports cuda, gpu, bench or ipc. Package
// report lays its figures out in a document.
package plot

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	imagedraw "image/draw"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/p2pbench/p2pbench/internal/outfile"
	"github.com/p2pbench/p2pbench/results"
)

// Chart is one chart of a run (a heatmap, a curve), ready to draw at any size.
type Chart struct {
	// Name is the file name stem: "heatmap_ce_read", "size", ...
	Name string
	// Title is the figure's title, for lists and report headings.
	Title string
	// Width and Height are the natural size the figure is designed for.
	Width, Height vg.Length

	caption   []string
	simulated bool
	body      func(c draw.Canvas)
}

// PNGDPI is the resolution of PNG figures: sharp on screens and in wikis
// without making files large.
const PNGDPI = 150

// Figures returns every figure the run has data for, in reading order:
// heatmaps, size curves, rank scatter, the NVLink counters' wire chart,
// latency and atomics, and an imported nccl-tests run's bus and algorithm
// bandwidth of each collective. Figures whose
// tests are absent from the run are left out.
func Charts(run *results.Run) []Chart {
	ix := newIndex(run)
	var figs []Chart
	caption := CaptionLines(run)
	add := func(name, title string, w, h vg.Length, body func(c draw.Canvas)) {
		figs = append(figs, Chart{Name: name, Title: title, Width: w, Height: h, caption: caption, simulated: run.Simulated, body: body})
	}
	for _, m := range heatmaps(ix) {
		m := m
		w, h := m.size()
		add(m.name, m.title, w, h, m.draw)
	}
	// Read and write sweeps side by side, one figure; a sweep of one
	// direction alone.
	switch sc := sizeCurves(ix); {
	case len(sc) == 2:
		add("size", sizePanelsTitle, 13*vg.Inch, 6.5*vg.Inch, sizePanels{read: sc[0], write: sc[1]}.draw)
	case len(sc) == 1:
		add(sc[0].name, sc[0].title, 9*vg.Inch, 6*vg.Inch, sc[0].draw)
	}
	if r := rankScatter(ix); r != nil {
		add("rank", r.title, 9*vg.Inch, 6*vg.Inch, r.draw)
	}
	if w := wireChart(ix); w != nil {
		add("wire", w.title, 11*vg.Inch, w.height(), w.draw)
	}
	for _, b := range latencyFigures(ix) {
		b := b
		add(b.name, b.title, b.width, 6*vg.Inch, b.draw)
	}
	for _, n := range ncclCharts(ix) {
		add(n.name, n.title, 9*vg.Inch, 6*vg.Inch, n.draw)
	}
	return figs
}

// Draw draws the figure, with its caption and, for a simulated run, the
// watermark, filling c.
func (f Chart) Draw(c draw.Canvas) {
	if _, blank := c.Canvas.(fastPNG); !blank {
		c.SetColor(white)
		c.Fill(c.Rectangle.Path())
	}
	caption := f.caption
	capStyle := textStyle(captionSize, darkGrey)
	lineH := capStyle.Height("Mg") * 1.25
	pad := vg.Points(6)
	capH := lineH*vg.Length(len(caption)) + pad
	body := draw.Crop(c, pad, -pad, capH+pad/2, -pad)
	f.body(body)
	// A thin rule separates the caption from the figure.
	c.StrokeLine2(draw.LineStyle{Color: lightGrey, Width: vg.Points(0.5)},
		c.Min.X+pad, c.Min.Y+capH+pad/4, c.Max.X-pad, c.Min.Y+capH+pad/4)
	for i, line := range caption {
		y := c.Min.Y + capH - lineH*vg.Length(i+1) + lineH*0.2
		c.FillText(capStyle, vg.Point{X: c.Min.X + pad, Y: y}, line)
	}
	if f.simulated {
		if fp, ok := c.Canvas.(fastPNG); !ok || !fp.watermark() {
			watermark(c, withAlpha(alertRed, 0.18))
		}
	}
}

// CaptionLines describe where and with what a run was made, as every figure
// of the run says in its caption: host, GPUs, driver and CUDA, p2pbench
// version, date, and whether the run is simulated or incomplete.
func CaptionLines(run *results.Run) []string {
	env := run.Environment
	driver := env.DriverRelease
	if driver == "" && env.DriverVersion > 0 {
		driver = fmt.Sprintf("%d.%d", env.DriverVersion/1000, env.DriverVersion%1000/10)
	}
	var parts []string
	if run.Host != "" {
		parts = append(parts, "host "+run.Host)
	}
	parts = append(parts, run.GPUSummary())
	sw := "driver " + orUnknown(driver)
	if env.CUDAVersion != "" {
		sw += ", CUDA " + env.CUDAVersion
	}
	parts = append(parts, sw)
	if run.Imported != nil {
		// Another tool's figures: named as its, with the importer.
		parts = append(parts, strings.TrimSpace(orUnknown(run.Tool.Name)+" "+run.Tool.Version)+", imported by p2pbench")
	} else {
		parts = append(parts, "p2pbench "+orUnknown(run.Tool.Version))
	}
	if !run.Start.IsZero() {
		parts = append(parts, run.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
	lines := []string{strings.Join(parts, "  ·  ")}
	var notes []string
	if run.Simulated {
		sim := "SIMULATED run"
		if run.SimMachine != "" {
			sim += " (" + run.SimMachine + ")"
		}
		notes = append(notes, sim+": synthetic figures, not measurements")
	}
	if !run.Complete {
		stop := "INCOMPLETE run"
		if run.Stopped != "" {
			stop += ": " + run.Stopped
		}
		notes = append(notes, stop)
	}
	if len(notes) > 0 {
		lines = append(lines, strings.Join(notes, "  ·  "))
	}
	return lines
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// watermark writes SIMULATED diagonally across c, translucent so the data
// stays readable, on top so no plot element can hide it.
func watermark(c draw.Canvas, col color.Color) {
	const word = "SIMULATED"
	w, h := c.Max.X-c.Min.X, c.Max.Y-c.Min.Y
	angle := math.Atan2(float64(h), float64(w))
	diag := vg.Length(math.Hypot(float64(w), float64(h)))
	// Regular weight: PDFs emulate bold by overstriking, which would show
	// as outlines in translucent text.
	sty := textStyle(10, col)
	// Size the word to about 60% of the diagonal.
	size := 10 * 0.6 * diag / sty.Width(word)
	sty = textStyle(float64(size), col)
	sty.Rotation = angle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, c.Center(), word)
}

// WriteAll writes figs into dir (made when missing) in each format (png,
// svg, pdf), each to the file its FileName says, and returns the paths
// written, in the order of figs and then formats. Every file is written
// atomically by the policy of internal/outfile; files are drawn on as many
// goroutines as there are CPUs (a 72-GPU run's heatmaps take a second or
// two one after the other); ctx is checked before each, and its error
// returned. On an error it returns the first in that order, with the paths
// written before it. No file it writes may be one of inputs (WriteDir).
func WriteAll(ctx context.Context, figs []Chart, dir string, formats []string, inputs ...string) ([]string, error) {
	written, _, err := WriteDir(ctx, figs, dir, formats, inputs...)
	return written, err
}

// WriteDir is WriteAll that also says which figures of an earlier
// WriteAll into dir it removed. The directory is an output under the
// policy of internal/outfile (outfile.Dir: absent or a directory, a link
// followed only when the user or root owns it), made when missing; the
// figures it holds are this call's alone: those an earlier call listed in
// the directory's manifest (.p2pbench-figures) and this one does not write
// are removed, and the manifest lists this call's. Files it never wrote
// are left alone. Neither the directory nor a file it writes may be one of
// inputs: every path is checked before the first figure is drawn. Two
// calls into one directory at once are refused (the second fails at once,
// naming the process of the first): the lock of dir's figures is held
// while they are written.
func WriteDir(ctx context.Context, figs []Chart, dir string, formats []string, inputs ...string) (written, removed []string, err error) {
	for _, f := range formats {
		if strings.ToLower(f) == "pdf" {
			continue
		}
		if _, err := canvasFor(f, vg.Inch, vg.Inch); err != nil {
			return nil, nil, err
		}
	}
	if _, err := outfile.Dir(dir, inputs...); err != nil {
		return nil, nil, err
	}
	unlock, err := outfile.Lock(filepath.Join(dir, "figures"))
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	paths := make([]string, 0, len(figs)*len(formats))
	for _, fig := range figs {
		for _, format := range formats {
			p := filepath.Join(dir, fig.FileName(format))
			if err := outfile.Check(p, inputs...); err != nil {
				return nil, nil, err
			}
			paths = append(paths, p)
		}
	}
	earlier := earlierFigures(dir)
	errs := make([]error, len(paths))
	shared := &pngShared{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(paths)) {
		wg.Go(func() {
			for i := range next {
				if errs[i] = context.Cause(ctx); errs[i] == nil {
					fig, format := figs[i/len(formats)], formats[i%len(formats)]
					errs[i] = outfile.Write(paths[i], func(w io.Writer) error { return fig.writeTo(w, format, shared) })
				}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return paths[:i], nil, err
		}
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	removed, err = replaceFigures(dir, earlier, names)
	return paths, removed, err
}

// PNGs draws figs as PNG images, on as many goroutines as there are CPUs,
// their watermark drawn once per size and their images and encoders lent
// again (as WriteAll does), and returns them in the order of figs; on an
// error, the first in that order.
func PNGs(figs []Chart) ([][]byte, error) {
	out := make([][]byte, len(figs))
	errs := make([]error, len(figs))
	shared := &pngShared{}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.NumCPU(), len(figs)) {
		wg.Go(func() {
			for i := range next {
				var buf bytes.Buffer
				errs[i] = figs[i].writeTo(&buf, "png", shared)
				out[i] = buf.Bytes()
			}
		})
	}
	for i := range figs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FileName is the name of the figure's file in a format: its Name and the
// format as the extension.
func (f Chart) FileName(format string) string { return f.Name + "." + strings.ToLower(format) }

// WriteFile draws the figure at its natural size into a file of the given
// format (png, svg or pdf), written atomically by the policy of
// internal/outfile (a device, FIFO or directory at path is refused).
func (f Chart) WriteFile(path, format string) error {
	return outfile.Write(path, func(w io.Writer) error { return f.WriteTo(w, format) })
}

// WriteTo draws the figure at its natural size and writes it in the given
// format (png, svg or pdf) to w.
func (f Chart) WriteTo(w io.Writer, format string) error { return f.writeTo(w, format, nil) }

// writeTo is WriteTo, a PNG drawn with what shared holds when not nil.
func (f Chart) writeTo(w io.Writer, format string, shared *pngShared) error {
	if strings.ToLower(format) == "pdf" {
		return f.writePDF(w)
	}
	if strings.ToLower(format) == "png" && shared != nil {
		img := shared.image(f.Width, f.Height)
		defer shared.release(img)
		c := fastPNG{shared: shared}
		if f.simulated {
			c.mark = shared.watermark(img)
		}
		c.Canvas = newImageCanvas(img, color.White)
		f.Draw(draw.New(c))
		_, err := c.WriteTo(w)
		return err
	}
	c, err := canvasFor(format, f.Width, f.Height)
	if err != nil {
		return err
	}
	f.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

// canvas is what every gonum/plot backend offers.
type canvas interface {
	vg.CanvasSizer
	io.WriterTo
}

// pngBounds are the bounds of the image of a PNG figure w × h: its size
// rounded to whole pixels at PNGDPI.
func pngBounds(w, h vg.Length) image.Rectangle { return imageBounds(w, h, PNGDPI) }

// imageBounds are the bounds of the image of a figure w × h drawn at dpi:
// its size rounded to whole pixels, as vgimg.NewWith rounds it.
func imageBounds(w, h vg.Length, dpi int) image.Rectangle {
	px := func(l vg.Length) int { return int(l/vg.Inch*vg.Length(dpi) + 0.5) }
	return image.Rect(0, 0, px(w), px(h))
}

// newImageCanvas is vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI),
// vgimg.UseBackgroundColor(bg)) but for the image, img, drawn on where it
// is (vgimg's gg.NewContextForImage copies it: 8 MB a figure allocated,
// copied and painted twice) and painted bg all over whatever it held.
func newImageCanvas(img *image.RGBA, bg color.Color) *vgimg.Canvas {
	return newImageCanvasAt(img, bg, PNGDPI)
}

// newImageCanvasAt is newImageCanvas at dpi.
func newImageCanvasAt(img *image.RGBA, bg color.Color, dpi int) *vgimg.Canvas {
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt()
	ctx.InvertY()
	c := vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(dpi))
	if bg != color.White { // vgimg painted the page white
		imagedraw.Draw(img, img.Rect, image.NewUniform(bg), image.Point{}, imagedraw.Src)
	}
	return c
}

// fastPNG is vgimg.PngCanvas with the encoder's fastest compression (PNG's
// default compression takes a third of a 72-GPU run's figures' CPU time:
// docs/performance.md). Its image starts white (vgimg's
// default background), so Chart.Draw does not paint it white again (0.2 s
// of rasterising for those 17).
type fastPNG struct {
	*vgimg.Canvas
	shared *pngShared // nil: a new image and encoder
	mark   *mark      // nil: the watermark is drawn as text
}

// pngShared is what the PNG figures drawn together (one WriteDir or PNGs)
// share: the images figures are drawn on, and the encoders' buffers, each
// lent again once its figure is encoded: a 72-GPU run's heatmap is an image
// of 8 MB, and painting a new one white cost more than drawing the figure
// on it, on memory the process touched for the first time
// (docs/performance.md); the figures drawn on every CPU at once need as
// many images as CPUs, not one a figure.
type pngShared struct {
	mu      sync.Mutex
	free    [][]uint8
	buffers []*png.EncoderBuffer
}

// marks holds the watermark's mask of each size of image, drawn once for
// the process: drawing the word as text, rotated across the page, was
// 0.3 s of a 72-GPU run's 17 figures, and a process that draws several
// sets of figures (a report's PDF and its Markdown's files, the tests)
// draws the same word on pages of the same sizes again.
var marks struct {
	sync.Mutex
	m map[image.Point]*mark
}

// A mark is the watermark's mask for one size of image, ready once done
// is closed.
type mark struct {
	done chan struct{}
	// word is the part of the page the word covers (its mask's pixels not
	// zero), in the coordinates of the image it was drawn on, whose origin
	// is origin: painting through the rest of the mask, zero, leaves the
	// page as it is, so only word is painted, and only word is kept.
	word   image.Rectangle
	origin image.Point
	size   image.Point  // the page's
	mask   *image.Alpha // word's part of the mask; nil: not drawn
}

// image returns an image for a figure w × h: one given back that is large
// enough, else a new one. What it holds is painted over (newImageCanvas).
func (s *pngShared) image(w, h vg.Length) *image.RGBA {
	r := pngBounds(w, h)
	n := 4 * r.Dx() * r.Dy()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, pix := range s.free {
		if cap(pix) >= n {
			s.free = slices.Delete(s.free, i, i+1)
			return &image.RGBA{Pix: pix[:n], Stride: 4 * r.Dx(), Rect: r}
		}
	}
	return image.NewRGBA(r)
}

// release gives img back, its figure encoded.
func (s *pngShared) release(img *image.RGBA) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, img.Pix)
}

// Get and Put lend the PNG encoders' buffers (png.EncoderBufferPool).
func (s *pngShared) Get() *png.EncoderBuffer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.buffers); n > 0 {
		b := s.buffers[n-1]
		s.buffers = s.buffers[:n-1]
		return b
	}
	return nil
}

func (s *pngShared) Put(b *png.EncoderBuffer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buffers = append(s.buffers, b)
}

// watermark returns the watermark's mask for img's size. The first figure
// of a size in the process draws it, on img before the figure is drawn
// there (no image of its own); the others wait for it (mark.done) only
// when they paint it, after drawing their figure.
func (s *pngShared) watermark(img *image.RGBA) *mark {
	size := img.Rect.Size()
	marks.Lock()
	m, ok := marks.m[size]
	if !ok {
		m = &mark{done: make(chan struct{}), size: size}
		if marks.m == nil {
			marks.m = map[image.Point]*mark{}
		}
		marks.m[size] = m
	}
	marks.Unlock()
	if !ok {
		defer close(m.done)
		full := markMask(img)
		m.word, m.origin = wordBounds(full), img.Rect.Min
		m.mask = image.NewAlpha(m.word)
		for y := m.word.Min.Y; y < m.word.Max.Y; y++ {
			copy(m.mask.Pix[m.mask.PixOffset(m.word.Min.X, y):][:m.word.Dx()], full.Pix[full.PixOffset(m.word.Min.X, y):])
		}
	}
	return m
}

// markMask draws the word opaque on img, blank first, and returns its
// alpha: the watermark's mask for a page of img's size.
func markMask(img *image.RGBA) *image.Alpha {
	watermark(draw.New(newImageCanvas(img, color.Transparent)), alertRed)
	mask := image.NewAlpha(img.Rect)
	for i := range mask.Pix {
		mask.Pix[i] = img.Pix[4*i+3]
	}
	return mask
}

// watermark draws the watermark over the page, as Chart.Draw would: its
// mask painted in the watermark's translucent red. It reports false,
// drawing nothing, without a mask.
func (c fastPNG) watermark() bool {
	if c.mark == nil {
		return false
	}
	<-c.mark.done
	img := c.Image()
	if c.mark.mask == nil || c.mark.size != img.Bounds().Size() {
		return false
	}
	r := c.mark.word.Add(img.Bounds().Min.Sub(c.mark.origin))
	imagedraw.DrawMask(img, r, image.NewUniform(withAlpha(alertRed, 0.18)), image.Point{}, c.mark.mask, c.mark.word.Min, imagedraw.Over)
	return true
}

// wordBounds is the smallest rectangle holding every pixel of mask that is
// not zero (empty for none).
func wordBounds(mask *image.Alpha) image.Rectangle {
	var r image.Rectangle
	b := mask.Rect
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := mask.Pix[(y-b.Min.Y)*mask.Stride:][:b.Dx()]
		lo := slices.IndexFunc(row, func(a uint8) bool { return a != 0 })
		if lo < 0 {
			continue
		}
		hi := len(row) - 1
		for row[hi] == 0 {
			hi--
		}
		r = r.Union(image.Rect(b.Min.X+lo, y, b.Min.X+hi+1, y+1))
	}
	return r
}

func (c fastPNG) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if c.shared != nil {
		enc.BufferPool = c.shared
	}
	err := enc.Encode(cw, c.Image())
	return cw.n, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func canvasFor(format string, w, h vg.Length) (canvas, error) {
	switch strings.ToLower(format) {
	case "png":
		return fastPNG{Canvas: newImageCanvas(image.NewRGBA(pngBounds(w, h)), color.White)}, nil
	case "svg":
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("plot: unknown image format %q (want png, svg or pdf)", format)
}

// ParseFormats reads a comma-separated list of image formats: png, svg,
// pdf.
func ParseFormats(list string) ([]string, error) {
	var formats []string
	for _, f := range strings.Split(list, ",") {
		switch f = strings.ToLower(strings.TrimSpace(f)); f {
		case "png", "svg", "pdf":
			formats = append(formats, f)
		case "":
		default:
			return nil, fmt.Errorf("unknown image format %q; the formats are png, svg and pdf", f)
		}
	}
	if len(formats) == 0 {
		return nil, fmt.Errorf("--format names no image format")
	}
	return formats, nil
}
