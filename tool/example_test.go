package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gantry-dev/gantry/tool"
)

type weatherInput struct {
	City  string `json:"city" jsonschema:"The city"`
	Units string `json:"units,omitempty" enum:"metric,imperial" jsonschema:"Unit system (default metric)"`
}

func ExampleNewText() {
	weather, err := tool.NewText("Weather", "Returns the current weather of a city.",
		func(ctx context.Context, env *tool.Env, in weatherInput) (string, error) {
			if in.Units == "" {
				in.Units = "metric"
			}
			return fmt.Sprintf("%s: 21 degrees (%s)", in.City, in.Units), nil
		},
		tool.ReadOnly(),
		tool.DescribeFunc(func(in weatherInput) string { return "Weather in " + in.City }),
	)
	if err != nil {
		panic(err) // a bad schema or name fails here, never at call time
	}
	fmt.Println(string(weather.Spec().InputSchema))

	input := json.RawMessage(`{"city":"Lyon"}`)
	res, err := weather.Call(context.Background(), &tool.Env{}, input)
	if err != nil {
		panic(err)
	}
	fmt.Println(tool.Describe(weather, input), "→", res.TextContent())
	fmt.Println("read-only:", tool.TraitsOf(weather, input).ReadOnly)
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"The city"},"units":{"type":"string","description":"Unit system (default metric)","enum":["metric","imperial"]}},"required":["city"],"additionalProperties":false}
	// Weather in Lyon → Lyon: 21 degrees (metric)
	// read-only: true
}

type sum struct {
	Total int `json:"total"`
}

func ExampleNewTyped() {
	add := tool.Must(tool.NewTyped("Add", "Adds numbers.", func(ctx context.Context, env *tool.Env, in struct {
		Numbers []int `json:"numbers"`
	}) (sum, error) {
		var s sum
		for _, n := range in.Numbers {
			s.Total += n
		}
		return s, nil
	}))
	res, _ := add.Call(context.Background(), nil, json.RawMessage(`{"numbers":[1,2,3]}`))
	fmt.Println(string(add.Spec().OutputSchema))
	fmt.Printf("%+v\n", res.Structured)
	// Output:
	// {"type":"object","properties":{"total":{"type":"integer"}},"required":["total"],"additionalProperties":false}
	// {Total:6}
}
