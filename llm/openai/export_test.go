package openai

// ToolArrays returns how many joined tools arrays p holds.
func ToolArrays(p *Provider) int { return p.tools.Arrays() }
