package executor

import (
	"fmt"
	"slices"
	"strings"
)

// unknownToolError is the model-facing error for a name no tool has: it
// names the closest tools by edit distance (case-insensitive), or lists the
// available ones when nothing is close.
func unknownToolError(name string, names []string) error {
	close := closestNames(name, names, 3)
	if len(close) > 0 {
		return fmt.Errorf("Unknown tool %q. Did you mean %s? Call one of the available tools by its exact name.", name, quoteJoin(close))
	}
	const maxList = 30
	all := slices.Clone(names)
	slices.Sort(all)
	more := ""
	if len(all) > maxList {
		more = fmt.Sprintf(" and %d more", len(all)-maxList)
		all = all[:maxList]
	}
	if len(all) == 0 {
		return fmt.Errorf("Unknown tool %q: no tools are available.", name)
	}
	return fmt.Errorf("Unknown tool %q. Available tools: %s%s.", name, strings.Join(all, ", "), more)
}

func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// closestNames returns up to max names within an edit distance of about a
// third of the name's length (at least 2), closest first; a name equal up to
// case, or containing / contained in the name, counts as distance 1.
func closestNames(name string, names []string, max int) []string {
	type cand struct {
		n string
		d int
	}
	lname := strings.ToLower(name)
	limit := max3(2, len([]rune(name))/3)
	var cs []cand
	for _, n := range names {
		ln := strings.ToLower(n)
		d := levenshtein(lname, ln)
		if d > 0 && (strings.Contains(ln, lname) || strings.Contains(lname, ln)) && len(lname) >= 3 && len(ln) >= 3 {
			d = min(d, 2)
		}
		if ln == lname {
			d = 0
		}
		if d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.n, b.n)
	})
	var out []string
	for _, c := range cs {
		if len(out) == max {
			break
		}
		out = append(out, c.n)
	}
	return out
}

func max3(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// levenshtein is the edit distance between two strings, by runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 {
		return len(rb)
	}
	if len(rb) == 0 {
		return len(ra)
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
