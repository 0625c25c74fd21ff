// Package shapes is the LSP tests' fixture: an interface, two
// implementations and a function that calls through the interface.
package shapes

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Square is a square.
type Square struct{ Side float64 }

// Area returns the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }

// Circle is a circle.
type Circle struct{ R float64 }

// Area returns the circle's area.
func (c Circle) Area() float64 { return 3 * c.R * c.R }

// Total sums the areas of shapes.
func Total(shapes ...Shape) float64 {
	sum := 0.0
	for _, s := range shapes {
		sum += s.Area()
	}
	return sum
}
