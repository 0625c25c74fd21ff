//go:build linux

// Command pages shows which pages of a Go binary a run keeps resident, and
// whose code and data they hold: it runs the command under ptrace, stops it
// at its exit (PTRACE_EVENT_EXIT, before the kernel tears the address space
// down), reads /proc/PID/maps and /proc/PID/pagemap for the mappings of the
// binary, and attributes every resident page to the ELF section and the
// symbols (hence Go packages) it holds.
//
//	go build -o /tmp/gantry ./cmd/gantry
//	go -C bench run ./pages -turns 10 /tmp/gantry -p work    # the -p budget run against the fake API
//	go -C bench run ./pages /tmp/gantry --version
//
// With -turns N (N > 0) the command runs in a temporary directory holding
// f00.txt … f09.txt, against a fake Anthropic API (llm/llmtest) scripted
// with N tool turns (Read and Glob alternating) and a final text answer:
// the scenario of BenchmarkCLI10ToolTurns. Without it, the command runs in
// the current directory with the current environment.
//
// The report: the peak RSS (VmHWM) and the anonymous/file split at exit;
// the resident kilobytes of each section of the binary; the resident
// kilobytes of .text, .rodata and the other symbol-bearing sections by
// package (a page's bytes are shared among the symbols on it), largest
// first. A fault on a file mapping maps the page-cache pages around it
// (fault-around, 64 KB by default), so a resident page is not always a
// touched one: packages whose code sits beside touched code show up too.
package main

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

func main() {
	turns := flag.Int("turns", 0, "run against a fake Anthropic API scripted with this many tool turns (0: no fake API, current directory)")
	top := flag.Int("top", 40, "how many packages to list per section")
	sym := flag.Int("syms", 0, "also list this many largest resident symbols")
	plain := flag.Bool("run", false, "only run the command in the scenario (no ptrace, no report): for wrapping it in strace or perf")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: pages [-turns N] [-top N] [-syms N] BINARY [ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*turns, *top, *sym, *plain, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "pages:", err)
		os.Exit(1)
	}
}

func run(turns, top, nsyms int, plain bool, args []string) error {
	bin, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	cmd := exec.Command(bin, args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if turns > 0 {
		dir, err := os.MkdirTemp("", "gantry-pages-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		for i := range 10 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(strings.Repeat("some text\n", 50)), 0o644); err != nil {
				return err
			}
		}
		srv := llmtest.Start()
		defer srv.Close()
		for i := range turns {
			call := llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Read", Input: fmt.Sprintf(`{"file_path":"f%02d.txt"}`, i%10)}
			if i%2 == 1 {
				call = llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Glob", Input: `{"pattern":"*.txt"}`}
			}
			srv.Script(llmtest.ToolReply(call))
		}
		srv.Script(llmtest.TextReply("done"))
		home := filepath.Join(dir, ".home")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=k", "HOME="+home,
			"GANTRY_HOME="+filepath.Join(home, ".gantry"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	}
	if plain {
		cmd.Stdout = os.Stdout
		return cmd.Run()
	}
	snap, err := runToExit(cmd, bin)
	if err != nil {
		return err
	}
	return report(os.Stdout, bin, snap, top, nsyms)
}

// snapshot is what the run left resident at its exit.
type snapshot struct {
	hwm, rss, anon int64 // bytes
	// resident holds, per mapping of the binary, the file offsets of its
	// resident pages.
	resident []int64
	pageSize int64
	// maps are the mappings with anonymous memory, from /proc/PID/smaps.
	maps []mapping
}

// mapping is one line of /proc/PID/maps with its anonymous kilobytes.
type mapping struct {
	line string
	anon int64 // bytes
}

// runToExit starts cmd under ptrace and takes the snapshot when its main
// thread reaches its exit.
func runToExit(cmd *exec.Cmd, bin string) (*snapshot, error) {
	// Every ptrace request must come from the thread that started the
	// tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	// The tracee stops with SIGTRAP after its exec.
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return nil, err
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		return nil, fmt.Errorf("ptrace options: %w", err)
	}
	if err := syscall.PtraceCont(pid, 0); err != nil {
		return nil, err
	}
	var snap *snapshot
	for {
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
			return nil, err
		}
		switch {
		case ws.Exited():
			if ws.ExitStatus() != 0 {
				return snap, fmt.Errorf("%s exited with status %d", bin, ws.ExitStatus())
			}
			if snap == nil {
				return nil, fmt.Errorf("%s exited without an exit stop", bin)
			}
			return snap, nil
		case ws.Signaled():
			return nil, fmt.Errorf("%s killed by %v", bin, ws.Signal())
		case ws.Stopped():
			sig := ws.StopSignal()
			if sig == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT {
				s, err := read(pid, bin)
				if err != nil {
					_ = syscall.PtraceCont(pid, 0)
					return nil, err
				}
				snap = s
				sig = 0
			} else if sig == syscall.SIGTRAP {
				sig = 0
			}
			if err := syscall.PtraceCont(pid, int(sig)); err != nil {
				return nil, err
			}
		}
	}
}

// read takes the snapshot of a stopped process.
func read(pid int, bin string) (*snapshot, error) {
	s := &snapshot{pageSize: int64(os.Getpagesize())}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	s.hwm = kbField(string(status), "VmHWM:")
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return nil, err
	}
	s.rss = kbField(string(rollup), "Rss:")
	s.anon = kbField(string(rollup), "Anonymous:")
	smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			s.maps = append(s.maps, mapping{line: line})
		} else if len(s.maps) > 0 && strings.HasPrefix(line, "Anonymous:") {
			s.maps[len(s.maps)-1].anon = kbField(line, "Anonymous:")
		}
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	pm, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer pm.Close()
	for _, line := range strings.Split(string(maps), "\n") {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 || f[5] != bin {
			continue
		}
		var start, end uint64
		if _, err := fmt.Sscanf(f[0], "%x-%x", &start, &end); err != nil {
			return nil, err
		}
		off, err := strconv.ParseInt(f[2], 16, 64)
		if err != nil {
			return nil, err
		}
		n := int64(end-start) / s.pageSize
		buf := make([]byte, 8*n)
		if _, err := pm.ReadAt(buf, int64(start/uint64(s.pageSize))*8); err != nil {
			return nil, fmt.Errorf("pagemap: %w", err)
		}
		for i := range n {
			e := binary.LittleEndian.Uint64(buf[8*i:])
			// Bit 63: present. (A private page written since the map,
			// such as .data, is anonymous and counted there, but it is
			// still a page of the binary's layout.)
			if e&(1<<63) != 0 {
				s.resident = append(s.resident, off+i*s.pageSize)
			}
		}
	}
	return s, nil
}

// kbField reads a "Name:   123 kB" line, in bytes.
func kbField(text, name string) int64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// report attributes the resident pages to sections and packages.
func report(w *os.File, bin string, s *snapshot, top, nsyms int) error {
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "peak RSS %s; at exit %s = %s anonymous + %s file-backed; %s of the binary resident (%d pages)\n",
		mb(s.hwm), mb(s.rss), mb(s.anon), mb(s.rss-s.anon), mb(int64(len(s.resident))*s.pageSize), len(s.resident))

	fmt.Fprintf(w, "\nanonymous memory by mapping (KB)\n")
	for _, m := range s.maps {
		if m.anon > 0 {
			fmt.Fprintf(w, "  %8d  %s\n", m.anon>>10, m.line)
		}
	}
	// Sections by file offset.
	type secStat struct {
		sec      *elf.Section
		resident int64
		pkgs     map[string]int64
		syms     map[string]int64
	}
	var secs []*secStat
	for _, sec := range f.Sections {
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Size == 0 {
			continue
		}
		secs = append(secs, &secStat{sec: sec, pkgs: map[string]int64{}, syms: map[string]int64{}})
	}
	// Symbols by address, per section.
	type symRange struct {
		lo, hi uint64
		name   string
	}
	bySec := map[int][]symRange{}
	for _, sy := range syms {
		if int(sy.Section) <= 0 || int(sy.Section) >= len(f.Sections) || sy.Size == 0 {
			continue
		}
		bySec[int(sy.Section)] = append(bySec[int(sy.Section)], symRange{sy.Value, sy.Value + sy.Size, sy.Name})
	}
	for k := range bySec {
		slices.SortFunc(bySec[k], func(a, b symRange) int { return cmp.Compare(a.lo, b.lo) })
	}
	secIndex := map[*elf.Section]int{}
	for i, sec := range f.Sections {
		secIndex[sec] = i
	}
	for _, off := range s.resident {
		pEnd := off + s.pageSize
		for _, st := range secs {
			sLo, sHi := int64(st.sec.Offset), int64(st.sec.Offset+st.sec.Size)
			lo, hi := max(off, sLo), min(pEnd, sHi)
			if lo >= hi {
				continue
			}
			st.resident += hi - lo
			// Addresses of the page's part in this section.
			aLo := st.sec.Addr + uint64(lo-sLo)
			aHi := st.sec.Addr + uint64(hi-sLo)
			rs := bySec[secIndex[st.sec]]
			i, _ := slices.BinarySearchFunc(rs, aLo, func(r symRange, a uint64) int {
				if r.hi <= a {
					return -1
				}
				if r.lo > a {
					return 1
				}
				return 0
			})
			covered := uint64(0)
			for ; i < len(rs) && rs[i].lo < aHi; i++ {
				l, h := max(rs[i].lo, aLo), min(rs[i].hi, aHi)
				if l >= h {
					continue
				}
				covered += h - l
				st.pkgs[pkgOf(rs[i].name)] += int64(h - l)
				st.syms[rs[i].name] += int64(h - l)
			}
			if rest := (aHi - aLo) - min(covered, aHi-aLo); rest > 0 {
				st.pkgs["(no symbol)"] += int64(rest)
			}
		}
	}
	fmt.Fprintf(w, "\n%-20s %10s %10s\n", "section", "size KB", "resident KB")
	for _, st := range secs {
		fmt.Fprintf(w, "%-20s %10d %10d\n", st.sec.Name, st.sec.Size>>10, st.resident>>10)
	}
	if err := pclntab(f, s, bySecPCLN(f), top); err != nil {
		fmt.Fprintln(w, "pclntab:", err)
	}
	for _, st := range secs {
		if st.resident < 64<<10 || len(st.pkgs) < 2 || st.sec.Name == ".gopclntab" {
			continue
		}
		fmt.Fprintf(w, "\n%s by package (resident KB)\n", st.sec.Name)
		printTop(w, st.pkgs, top)
		if nsyms > 0 {
			fmt.Fprintf(w, "\n%s by symbol (resident KB)\n", st.sec.Name)
			printTop(w, st.syms, nsyms)
		}
	}
	return nil
}

func printTop(w *os.File, m map[string]int64, n int) {
	type kv struct {
		k string
		v int64
	}
	var all []kv
	var total int64
	for k, v := range m {
		all = append(all, kv{k, v})
		total += v
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(b.v, a.v) })
	for i, e := range all {
		if i == n {
			var rest int64
			for _, e := range all[n:] {
				rest += e.v
			}
			fmt.Fprintf(w, "  %8d  (%d more)\n", rest>>10, len(all)-n)
			break
		}
		fmt.Fprintf(w, "  %8d  %s\n", e.v>>10, e.k)
	}
	fmt.Fprintf(w, "  %8d  total\n", total>>10)
}

// pkgOf is the Go package of a symbol name: "a/b/c.F" → "a/b/c",
// "type:*a/b.T" → "type:", "go:string.*" → "go:string".
func pkgOf(name string) string {
	if i := strings.IndexByte(name, ':'); i > 0 && !strings.Contains(name[:i], "/") && !strings.Contains(name[:i], ".") {
		return name[:i+1]
	}
	slash := strings.LastIndexByte(name, '/')
	if slash < 0 {
		slash = 0
	}
	if dot := strings.IndexByte(name[slash:], '.'); dot >= 0 {
		return name[:slash+dot]
	}
	return name
}

// bySecPCLN returns the .gopclntab section and the address of go:func.*
// (the function data that follows the tables).
func bySecPCLN(f *elf.File) *elf.Section { return f.Section(".gopclntab") }

// pclntab reports the resident part of the function table by sub-table and,
// for the per-function parts (pc-value tables, _func records, function
// data), by package. The layout is the runtime's pcHeader (runtime/symtab.go).
func pclntab(f *elf.File, s *snapshot, sec *elf.Section, top int) error {
	if sec == nil {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		return err
	}
	syms, _ := f.Symbols()
	var gofunc, findfunctab uint64
	for _, sy := range syms {
		switch sy.Name {
		case "go:func.*":
			gofunc = sy.Value - sec.Addr
		case "runtime.findfunctab":
			findfunctab = sy.Value - sec.Addr
		}
	}
	le := binary.LittleEndian
	u64 := func(off int) uint64 { return le.Uint64(data[off:]) }
	nfunc := int(u64(8))
	hdr := []struct {
		name string
		off  uint64
	}{
		{"header", 0}, {"funcnametab", u64(32)}, {"cutab", u64(40)}, {"filetab", u64(48)},
		{"pctab", u64(56)}, {"functab+_func", u64(64)}, {"go:func.* (funcdata)", gofunc},
		{"findfunctab", findfunctab}, {"end", uint64(len(data))},
	}
	// Resident bytes per sub-table.
	resident := func(lo, hi uint64) int64 {
		var n int64
		for _, off := range s.resident {
			pLo := uint64(off) - sec.Offset
			pHi := pLo + uint64(s.pageSize)
			if off < int64(sec.Offset) {
				if uint64(off)+uint64(s.pageSize) <= sec.Offset {
					continue
				}
				pLo = 0
				pHi = uint64(off) + uint64(s.pageSize) - sec.Offset
			}
			if a, b := max(pLo, lo), min(pHi, hi); a < b {
				n += int64(b - a)
			}
		}
		return n
	}
	fmt.Fprintf(os.Stdout, "\n.gopclntab by table (%d functions)   size KB  resident KB\n", nfunc)
	for i := 0; i+1 < len(hdr); i++ {
		fmt.Fprintf(os.Stdout, "  %-28s %10d %10d\n", hdr[i].name, (hdr[i+1].off-hdr[i].off)>>10, resident(hdr[i].off, hdr[i+1].off)>>10)
	}
	// Per function: its _func record, and the start of its pc-value tables
	// and of its function data, attributed to its package.
	pcln := u64(64)
	pctab := u64(56)
	funcname := u64(32)
	type span struct {
		lo  uint64
		pkg string
	}
	var funcs, pcs, fds []span
	for i := range nfunc {
		funcoff := uint64(le.Uint32(data[pcln+uint64(8*i)+4:]))
		fo := pcln + funcoff
		nameOff := uint64(le.Uint32(data[fo+4:]))
		name := data[funcname+nameOff:]
		if j := slices.Index(name, 0); j >= 0 {
			name = name[:j]
		}
		pkg := pkgOf(string(name))
		funcs = append(funcs, span{fo, pkg})
		npcdata := le.Uint32(data[fo+28:])
		nfuncdata := uint32(data[fo+43])
		lo := uint32(0xffffffff)
		for _, o := range []uint32{le.Uint32(data[fo+16:]), le.Uint32(data[fo+20:]), le.Uint32(data[fo+24:])} {
			if o != 0 {
				lo = min(lo, o)
			}
		}
		for k := range npcdata {
			if o := le.Uint32(data[fo+44+4*uint64(k):]); o != 0 {
				lo = min(lo, o)
			}
		}
		if lo != 0xffffffff {
			pcs = append(pcs, span{pctab + uint64(lo), pkg})
		}
		flo := uint32(0xffffffff)
		for k := range nfuncdata {
			if o := le.Uint32(data[fo+44+4*uint64(npcdata)+4*uint64(k):]); o != 0xffffffff {
				flo = min(flo, o)
			}
		}
		if flo != 0xffffffff && gofunc != 0 {
			fds = append(fds, span{gofunc + uint64(flo), pkg})
		}
	}
	attribute := func(title string, spans []span, end uint64) {
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
		m := map[string]int64{}
		for i, sp := range spans {
			hi := end
			if i+1 < len(spans) {
				hi = spans[i+1].lo
			}
			if hi > sp.lo {
				m[sp.pkg] += resident(sp.lo, hi)
			}
		}
		fmt.Fprintf(os.Stdout, "\n.gopclntab %s by package (resident KB)\n", title)
		printTop(os.Stdout, m, top)
	}
	attribute("pctab", pcs, pcln)
	attribute("_func", funcs, gofunc)
	attribute("funcdata", fds, findfunctab)
	return nil
}
