package main

import (
	"fmt"

	"example.com/fixture/shapes"
)

func main() {
	fmt.Println(describe(shapes.Square{Side: 2}))
}

func describe(s shapes.Shape) string {
	return fmt.Sprintf("%.1f", shapes.Total(s))
}
