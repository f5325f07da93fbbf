package timeline

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testtier"
)

// The browser tests load the fixture's page in Debian's chromium, headless,
// with everything that could reach the network switched off.

const (
	goldenPNG = "testdata/timeline.golden.png"
	// readmePNG is the picture the README shows: the fixture's page as
	// chromium draws it, cut to the timeline; -update rewrites it too.
	readmePNG = "../../docs/img/timeline.png"
)

// chromium finds the browser: absent, the test skips on a workstation and
// fails in CI (CI=true), where .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	testtier.Integration(t)
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("chromium is not installed (CI installs it with apt-get in .ci/run): %v", err)
	}
	t.Skip("chromium is not installed: `apt-get install chromium` runs the browser tests")
	return ""
}

// runChromium loads page (a file) headless with args added, and returns
// what it printed on stdout and stderr.
func runChromium(t *testing.T, bin, page string, args ...string) (stdout, stderr string) {
	t.Helper()
	// A bound, not a timing assertion: chromium that hangs fails the test
	// instead of the whole package's timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--hide-scrollbars", "--force-device-scale-factor=1", "--force-color-profile=srgb"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "TZ=UTC", "LANG=C.UTF-8")
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleLines are the page's console messages chromium logged: the page
// has no script, so every one is an error (a blocked load, a script error).
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// writePage writes the page into a fresh directory and returns its path.
func writePage(t *testing.T, page []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBrowserLoadsThePageWithoutAConsoleMessage(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	page := fixturePage(t)
	dom, logs := runChromium(t, bin, writePage(t, page), "--dump-dom")
	if m := consoleLine.FindAllString(logs, -1); len(m) > 0 {
		t.Fatalf("the page logged to the console:\n%s", strings.Join(m, "\n"))
	}
	// The page really loaded: the DOM chromium built holds every bar.
	if n := strings.Count(dom, `<rect class="bar s-`); n != 21+12 || !strings.Contains(dom, "</svg>") {
		t.Fatalf("chromium's DOM has %d bars:\n%.500s", n, dom)
	}
	// The same check sees a page that tries to load something: its content
	// security policy blocks the load and says so on the console.
	bad := bytes.Replace(page, []byte("</main>"), []byte(`<img src="https://example.invalid/x.png" alt=""></main>`), 1)
	_, logs = runChromium(t, bin, writePage(t, bad), "--dump-dom")
	if !consoleLine.MatchString(logs) || !strings.Contains(logs, "Content Security Policy") {
		t.Fatalf("a page that loads an image from the network logged nothing:\n%s", logs)
	}
}

// drawingOnly hides the page's text, and the tables whose columns are as
// wide as their text: what is left is drawn from fixed numbers only.
const drawingOnly = `<style>
* { color: transparent !important; }
svg text { fill: transparent !important; }
table { visibility: hidden !important; }
</style></head>`

// TestBrowserDrawsTheFixtureAsTheGoldenScreenshot compares chromium's
// screenshot of the fixture's page with the golden one.
//
// Tolerance: text is hidden for the comparison, because fonts (and their
// hinting) differ between machines and would move every glyph; the tables
// go with it, their column widths follow the font. What remains — stripes,
// grid, bars and their colours, hatched waits, marks, the legend's
// swatches — is placed by fixed numbers, so it must match. A pixel counts
// as different when a colour channel is off by more than 48 of 255 (edges
// anti-aliased a little differently by another chromium build stay under
// it); at most 0.5% of the pixels (4 800 of 960 000) may differ, far less
// than one bar's worth (a bar is about 20×18 = 360 pixels, so a bar missing,
// moved by its width or of another colour fails the test through the
// coloured-pixel census below even when it alone would fit).
func TestBrowserDrawsTheFixtureAsTheGoldenScreenshot(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	page := fixturePage(t)
	shot := filepath.Join(t.TempDir(), "drawing.png")
	drawing := bytes.Replace(page, []byte("</head>"), []byte(drawingOnly), 1)
	runChromium(t, bin, writePage(t, drawing), "--screenshot="+shot, "--window-size=1200,800")
	got := readPNG(t, shot)
	full := filepath.Join(t.TempDir(), "page.png")
	runChromium(t, bin, writePage(t, page), "--screenshot="+full, "--window-size=1200,800")
	if *update {
		copyFile(t, shot, goldenPNG)
		writeREADMEPicture(t, readPNG(t, full))
	}
	want := readPNG(t, goldenPNG)
	if got.Bounds() != want.Bounds() {
		t.Fatalf("screenshot is %v, golden %v", got.Bounds(), want.Bounds())
	}
	differ := countDiffering(got, want, 48)
	total := want.Bounds().Dx() * want.Bounds().Dy()
	t.Logf("%d of %d pixels differ from %s (%.3f%%)", differ, total, goldenPNG, 100*float64(differ)/float64(total))
	if differ*1000 > total*5 {
		keep := filepath.Join(os.TempDir(), "timeline-screenshot-"+fmt.Sprint(os.Getpid())+".png")
		copyFile(t, shot, keep)
		t.Fatalf("%d of %d pixels differ from %s (more than 0.5%%); the screenshot is %s (rerun with -update after looking at it)",
			differ, total, goldenPNG, keep)
	}
	// Each final state's colour covers as many pixels as the golden's, give
	// or take the edges: a bar of the wrong colour or size shows here.
	for name, c := range stateColours {
		g, w := countColour(got, c), countColour(want, c)
		if diff := g - w; diff > w/10+40 || -diff > w/10+40 {
			t.Errorf("%s (%v): %d pixels, golden %d", name, c, g, w)
		}
	}
	// The page itself, text and all, was drawn: it differs from the drawing.
	if countDiffering(readPNG(t, full), got, 48) < 2000 {
		t.Error("the full page's screenshot shows no text")
	}
}

// stateColours are the fills of the page's CSS for some final states.
var stateColours = map[string]color.RGBA{
	"completed":   {0x00, 0x9e, 0x73, 0xff},
	"incomplete":  {0xe6, 0x9f, 0x00, 0xff},
	"crashed":     {0xd5, 0x5e, 0x00, 0xff},
	"stuck":       {0xcc, 0x79, 0xa7, 0xff},
	"timeout":     {0xf0, 0xe4, 0x42, 0xff},
	"limited":     {0x56, 0xb4, 0xe9, 0xff},
	"interrupted": {0x9e, 0x9e, 0x9e, 0xff},
}

func readPNG(t *testing.T, path string) *image.RGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba
}

func countDiffering(a, b *image.RGBA, delta int) int {
	n := 0
	for i := 0; i+3 < len(a.Pix) && i+3 < len(b.Pix); i += 4 {
		for c := range 3 {
			if d := int(a.Pix[i+c]) - int(b.Pix[i+c]); d > delta || -d > delta {
				n++
				break
			}
		}
	}
	return n
}

// countColour counts the pixels within 6 of c on every channel.
func countColour(img *image.RGBA, c color.RGBA) int {
	n := 0
	want := [3]int{int(c.R), int(c.G), int(c.B)}
	for i := 0; i+3 < len(img.Pix); i += 4 {
		ok := true
		for ch := range 3 {
			if d := int(img.Pix[i+ch]) - want[ch]; d > 6 || d < -6 {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeREADMEPicture keeps the top of the page: header, timeline, legend.
func writeREADMEPicture(t *testing.T, img *image.RGBA) {
	t.Helper()
	top := img.SubImage(image.Rect(0, 0, img.Bounds().Dx(), 390))
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, top); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(readmePNG), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readmePNG, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
