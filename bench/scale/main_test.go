package main

import "testing"

// The limits docs/scale.md gives for the two budgets: 85 MiB for 120 MB,
// 900 MiB for 1 GiB.
func TestMemoryLimitFor(t *testing.T) {
	for _, tc := range []struct{ budgetMiB, wantMiB int64 }{{120, 85}, {1024, 899}} {
		if got := memoryLimitFor(tc.budgetMiB<<20) >> 20; got != tc.wantMiB {
			t.Errorf("memoryLimitFor(%d MiB) = %d MiB, want %d", tc.budgetMiB, got, tc.wantMiB)
		}
	}
}
