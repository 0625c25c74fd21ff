package anthropic

// EncodedTools returns how many tool encodings p holds.
func EncodedTools(p *Provider) int { return p.tools.Len() }

// ToolArrays returns how many joined tools arrays p holds.
func ToolArrays(p *Provider) int { return p.tools.Arrays() }
