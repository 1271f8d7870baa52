//go:build ignore

// make_icon draws icon.png: a chat bubble holding Minfer's offload bar
// (coloured blocks on the GPU, grey ones on the CPU, the budget line).
// Run with `go generate ./assets/`.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

const (
	size = 256
	ss   = 4 // supersampling per axis, for smooth edges
)

// inRoundRect reports whether (x, y) is inside the rounded rectangle.
func inRoundRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Max(x0+r, math.Min(x, x1-r))
	cy := math.Max(y0+r, math.Min(y, y1-r))
	return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
}

// inTriangle reports whether p lies in the triangle abc.
func inTriangle(px, py, ax, ay, bx, by, cx, cy float64) bool {
	d := func(x1, y1, x2, y2, x3, y3 float64) float64 { return (x1-x3)*(y2-y3) - (x2-x3)*(y1-y3) }
	d1, d2, d3 := d(px, py, ax, ay, bx, by), d(px, py, bx, by, cx, cy), d(px, py, cx, cy, ax, ay)
	neg := d1 < 0 || d2 < 0 || d3 < 0
	pos := d1 > 0 || d2 > 0 || d3 > 0
	return !(neg && pos)
}

var (
	bgTop    = color.NRGBA{0x2d, 0x3e, 0x73, 0xff}
	bgBottom = color.NRGBA{0x17, 0x1f, 0x3d, 0xff}
	bubble   = color.NRGBA{0xf4, 0xf6, 0xfb, 0xff}
	gpu      = color.NRGBA{0x1f, 0xa8, 0x8f, 0xff}
	kv       = color.NRGBA{0x8c, 0xd6, 0xc8, 0xff}
	cpu      = color.NRGBA{0xb8, 0xbe, 0xcc, 0xff}
	line     = color.NRGBA{0xe8, 0x5d, 0x3f, 0xff}
)

func lerp(a, b color.NRGBA, t float64) color.NRGBA {
	m := func(x, y uint8) uint8 { return uint8(float64(x)*(1-t) + float64(y)*t + 0.5) }
	return color.NRGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), 0xff}
}

// shade is the colour at one sample point (x, y in icon pixels), or
// transparent outside the icon.
func shade(x, y float64) color.NRGBA {
	if !inRoundRect(x, y, 8, 8, 248, 248, 52) {
		return color.NRGBA{}
	}
	c := lerp(bgTop, bgBottom, y/size)
	inBubble := inRoundRect(x, y, 36, 52, 220, 172, 30) || inTriangle(x, y, 70, 166, 112, 166, 62, 206)
	if !inBubble {
		return c
	}
	c = bubble
	// The offload bar: six blocks of slightly different widths.
	const top, bottom = 96.0, 128.0
	if y >= top && y <= bottom {
		edges := []float64{58, 80, 102, 124, 146, 168, 198}
		for i := 0; i+1 < len(edges); i++ {
			if x >= edges[i]+2 && x <= edges[i+1]-2 {
				switch {
				case i < 3:
					c = gpu
				case i == 3:
					c = kv
				default:
					c = cpu
				}
			}
		}
	}
	if x >= 143 && x <= 149 && y >= top-12 && y <= bottom+12 {
		c = line // the budget line
	}
	return c
}

func main() {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					c := shade(float64(px)+(float64(sx)+0.5)/ss, float64(py)+(float64(sy)+0.5)/ss)
					al := float64(c.A) / 255
					r += float64(c.R) * al
					g += float64(c.G) * al
					b += float64(c.B) * al
					a += al
				}
			}
			n := float64(ss * ss)
			if a == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{uint8(r/a + 0.5), uint8(g/a + 0.5), uint8(b/a + 0.5), uint8(a/n*255 + 0.5)})
		}
	}
	f, err := os.Create("icon.png")
	if err != nil {
		log.Fatal(err)
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
