package anthropic

// EncodedTools returns how many tool encodings p holds.
func EncodedTools(p *Provider) int { return p.tools.Len() }
