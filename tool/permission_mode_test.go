package tool

import "testing"

func TestModeWider(t *testing.T) {
	order := []Mode{ModePlan, ModeDontAsk, ModeDefault, ModeAcceptEdits, ModeBypassPermissions}
	for i, a := range order {
		for j, b := range order {
			if got, want := a.Wider(b), i > j; got != want {
				t.Errorf("%s.Wider(%s) = %v, want %v", a, b, got, want)
			}
		}
	}
	if Mode("").Wider(ModeDefault) || ModeDefault.Wider("") {
		t.Error(`"" must rank as default`)
	}
	for _, m := range order {
		if !Mode("superuser").Wider(m) {
			t.Errorf("an unknown mode must be wider than %s (so checks refuse it)", m)
		}
	}
}
