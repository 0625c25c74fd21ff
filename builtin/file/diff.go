package file

import (
	"fmt"
	"strings"
)

// Diff limits.
const (
	// diffMaxEdits bounds the Myers search (the number of inserted plus
	// deleted lines it looks for); past it the changed middle is shown as
	// one block of deletions followed by insertions, which is correct but
	// not minimal. Time is O((N+M)·D) and memory O(D²) ints.
	diffMaxEdits = 1000
	diffContext  = 3
	// diffMaxOutLines bounds the lines of one rendered diff.
	diffMaxOutLines = 2000
)

type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

type diffOp struct {
	kind opKind
	a, b int // line index in a (equal, delete) and b (equal, insert)
}

// splitLines splits s after every "\n". The last element has no newline
// if s does not end with one; an empty s has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	n := strings.Count(s, "\n")
	lines := make([]string, 0, n+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// diffLines returns an edit script turning a into b: every line of a is
// deleted or kept, every line of b inserted or kept, in order.
func diffLines(a, b []string) []diffOp {
	ids := make(map[string]int, len(a)+len(b))
	intern := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ai, bi := intern(a), intern(b)

	pre := 0
	for pre < len(ai) && pre < len(bi) && ai[pre] == bi[pre] {
		pre++
	}
	suf := 0
	for suf < len(ai)-pre && suf < len(bi)-pre && ai[len(ai)-1-suf] == bi[len(bi)-1-suf] {
		suf++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for i := 0; i < pre; i++ {
		ops = append(ops, diffOp{opEqual, i, i})
	}
	mid := myers(ai[pre:len(ai)-suf], bi[pre:len(bi)-suf], diffMaxEdits)
	if mid == nil {
		for i := pre; i < len(ai)-suf; i++ {
			ops = append(ops, diffOp{kind: opDelete, a: i, b: -1})
		}
		for j := pre; j < len(bi)-suf; j++ {
			ops = append(ops, diffOp{kind: opInsert, a: -1, b: j})
		}
	} else {
		for _, o := range mid {
			if o.a >= 0 {
				o.a += pre
			}
			if o.b >= 0 {
				o.b += pre
			}
			ops = append(ops, o)
		}
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, diffOp{opEqual, len(ai) - suf + i, len(bi) - suf + i})
	}
	return ops
}

// myers is Myers' O((N+M)D) diff. It returns nil when the shortest edit
// script is longer than maxD.
func myers(a, b []int, maxD int) []diffOp {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return []diffOp{}
	}
	if maxD > n+m {
		maxD = n + m
	}
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
				return backtrack(trace, n, m)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
	}
	return nil
}

func backtrack(trace [][]int, n, m int) []diffOp {
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		get := func(k int) int { return prev[k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		sx := px + 1 // after a deletion
		if pk == k+1 {
			sx = px // after an insertion
		}
		for x > sx {
			x--
			y--
			rev = append(rev, diffOp{opEqual, x, y})
		}
		if pk == k+1 {
			rev = append(rev, diffOp{kind: opInsert, a: -1, b: py})
		} else {
			rev = append(rev, diffOp{kind: opDelete, a: px, b: -1})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{opEqual, x, y})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// UnifiedDiff returns a unified diff (three lines of context) turning
// oldText into newText, with "--- a/path" and "+++ b/path" headers, or "" if
// they are equal. It is bounded: at most 2,000 output lines, and a minimal
// diff is searched only up to 1,000 changed lines (past that the changed
// region is shown as one replacement). The text is raw; pass it through
// [EscapeDisplay] before showing it to a person.
func UnifiedDiff(path, oldText, newText string) string {
	d, _, _ := renderDiff(path, oldText, newText)
	return d
}

// LineChanges counts the lines a line diff turning oldText into newText
// adds and removes (the figures of a diffstat), with [UnifiedDiff]'s
// bounds.
func LineChanges(oldText, newText []byte) (added, removed int) {
	if string(oldText) == string(newText) {
		return 0, 0
	}
	for _, o := range diffLines(splitLines(string(oldText)), splitLines(string(newText))) {
		switch o.kind {
		case opInsert:
			added++
		case opDelete:
			removed++
		}
	}
	return added, removed
}

// renderDiff is [UnifiedDiff] that also counts the added and removed lines.
func renderDiff(path, oldText, newText string) (diff string, added, removed int) {
	if oldText == newText {
		return "", 0, 0
	}
	a, b := splitLines(oldText), splitLines(newText)
	ops := diffLines(a, b)
	for _, o := range ops {
		switch o.kind {
		case opInsert:
			added++
		case opDelete:
			removed++
		}
	}

	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	lines := 2
	truncated := 0
	emit := func(prefix byte, line string) {
		if lines >= diffMaxOutLines {
			truncated++
			return
		}
		lines++
		out.WriteByte(prefix)
		if strings.HasSuffix(line, "\n") {
			out.WriteString(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
			out.WriteByte('\n')
		} else {
			out.WriteString(strings.TrimSuffix(line, "\r"))
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		// A hunk: from context before this change to the end of the last
		// change that is within 2*context equal lines of the previous.
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); {
			if ops[j].kind != opEqual {
				end = j + 1
				j++
				continue
			}
			run := j
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-j > 2*diffContext {
				break
			}
			j = run
		}
		stop := min(end+diffContext, len(ops))
		aStart, bStart, aLen, bLen := -1, -1, 0, 0
		for _, o := range ops[start:stop] {
			if o.kind != opInsert {
				if aStart < 0 {
					aStart = o.a
				}
				aLen++
			}
			if o.kind != opDelete {
				if bStart < 0 {
					bStart = o.b
				}
				bLen++
			}
		}
		if aStart < 0 {
			aStart = hunkAnchor(ops, start, true)
		} else {
			aStart++
		}
		if bStart < 0 {
			bStart = hunkAnchor(ops, start, false)
		} else {
			bStart++
		}
		if lines < diffMaxOutLines {
			fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", aStart, aLen, bStart, bLen)
			lines++
		}
		for _, o := range ops[start:stop] {
			switch o.kind {
			case opEqual:
				emit(' ', a[o.a])
			case opDelete:
				emit('-', a[o.a])
			case opInsert:
				emit('+', b[o.b])
			}
		}
		i = stop
	}
	if truncated > 0 {
		fmt.Fprintf(&out, "… diff truncated (%d more lines)\n", truncated)
	}
	return out.String(), added, removed
}

// hunkAnchor returns the unified-diff start of an empty side of a hunk: the
// number of lines of that side before the hunk (unified diff writes "-0,0"
// or "+N,0" for an empty range: the line after which it sits).
func hunkAnchor(ops []diffOp, start int, sideA bool) int {
	n := 0
	for _, o := range ops[:start] {
		if sideA && o.kind != opInsert || !sideA && o.kind != opDelete {
			n++
		}
	}
	return n
}
