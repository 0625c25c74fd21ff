package subagent

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"helper":                       true,
		"code-reviewer_2":              true,
		"tools:helper":                 true,
		"my.plugin-1:helper":           true,
		"":                             false,
		"tools:":                       false,
		":helper":                      false,
		"a:b:c":                        false,
		"tools:my.helper":              false,
		".tools:helper":                false,
		"two words":                    false,
		strings.Repeat("a", 65):        false,
		"p:" + strings.Repeat("a", 65): false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
	d := Definition{Name: "tools:helper", Description: "helps", Prompt: "You help."}
	if err := d.Validate(); err != nil {
		t.Errorf("a namespaced definition: %v", err)
	}
	d.Name = "tools:a:b"
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "plugin") {
		t.Errorf("Validate(%q) = %v, want a name error", d.Name, err)
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"helper", "tools:helper", "a:b:c", ":", "p.q:r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !ValidName(name) {
			return
		}
		if strings.Count(name, ":") > 1 || strings.ContainsAny(name, " /\\\n") || len(name) > 129 {
			t.Errorf("ValidName(%q) = true", name)
		}
	})
}
