package mcptool

import "testing"

func TestDescribeServer(t *testing.T) {
	for _, tc := range []struct {
		sc   ServerConfig
		want string
	}{
		{ServerConfig{Type: "stdio", Command: "npx", Args: []string{"-y", "@scope/pkg@1.2", "it's"}}, `npx -y @scope/pkg@1.2 'it'\''s'`},
		{ServerConfig{Type: "stdio", Command: "x", Args: []string{"", "a\nb"}, Env: map[string]string{"B": "2", "A": "1"}}, `x '' 'a\nb' (env: A, B)`},
		{ServerConfig{Type: "http", URL: "https://h/mcp", Headers: map[string]string{"X-Key": "k"}}, `http https://h/mcp (headers: X-Key)`},
		{ServerConfig{Type: "sse", URL: "https://h/\u202esse"}, `sse https://h/\u{202E}sse`},
	} {
		if got := tc.sc.Describe(); got != tc.want {
			t.Errorf("Describe(%+v) = %q, want %q", tc.sc, got, tc.want)
		}
	}
}
