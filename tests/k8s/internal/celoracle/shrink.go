package celoracle

// Shrinking a difference: fewer devices, fewer attributes, a smaller expression (a node
// replaced by a same-typed part of it or by a plain literal; then chunks of text cut), as
// long as the difference stays in its class. Each trial asks both sides once.

import (
	"encoding/json"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
)

type shrinker struct {
	peer     *Peer
	deadline time.Time
	class    string
	order    bool
	trials   int
	req      Request
	gs       []Response
	c        Response
}

// still: does req still differ in the same class? (then it becomes the current request)
func (s *shrinker) still(req Request) bool {
	if s.trials <= 0 || time.Now().After(s.deadline) {
		s.trials = 0
		return false
	}
	s.trials--
	req.ID = json.RawMessage(`"shrink"`)
	cr := s.peer.Ask([][]byte{Marshal(&req)})[0]
	gs := goAnswer(&req, s.order)
	v, g := CompareAny(gs, cr)
	if v != Differ || ClassOf(g, cr) != s.class {
		return false
	}
	s.req, s.gs, s.c = req, gs, cr
	return true
}

// Shrink returns the smallest request found that differs in the same class, with the
// answers of both sides to it.
func Shrink(peer *Peer, c *Case, class string, trials int, limit time.Duration) (Request, []Response, Response) {
	s := &shrinker{peer: peer, deadline: time.Now().Add(limit), class: class, order: c.OrderSensitive, trials: trials, req: c.Req}
	s.req.ID = json.RawMessage(`"shrink"`)
	s.gs = goAnswer(&s.req, s.order)
	s.c = peer.Ask([][]byte{Marshal(&s.req)})[0]
	if trials == 0 {
		return s.req, s.gs, s.c
	}
	if v, g := CompareAny(s.gs, s.c); v != Differ || ClassOf(g, s.c) != class {
		// not reproducible on its own (state in the tool?): keep it as it was
		return s.req, s.gs, s.c
	}
	s.options()
	s.devices()
	s.device()
	if c.Root != nil && c.Root.String() == *c.Req.Expr {
		s.tree(c.Root)
	}
	s.text()
	s.device()
	return s.req, s.gs, s.c
}

func (s *shrinker) options() {
	if s.req.CostLimit != nil {
		r := s.req
		r.CostLimit = nil
		s.still(r)
	}
	if s.req.Env == "new" {
		r := s.req
		r.Env = ""
		s.still(r)
	}
}

// devices: a "devices" request becomes a "device" one when a single device shows it.
func (s *shrinker) devices() {
	if s.req.Devices == nil {
		return
	}
	for i := range s.req.Devices {
		r := s.req
		d := s.req.Devices[i]
		r.Devices, r.Device = nil, &d
		if s.still(r) {
			return
		}
	}
}

func (s *shrinker) device() {
	if s.req.Device == nil {
		return
	}
	changed := true
	for changed && s.trials > 0 {
		changed = false
		d := *s.req.Device
		for _, name := range sortedNames(d.Attributes) {
			r := s.req
			nd := d
			nd.Attributes = copyWithout(d.Attributes, name)
			r.Device = &nd
			if s.still(r) {
				changed = true
				break
			}
		}
		if changed {
			continue
		}
		for _, name := range sortedNames(d.Capacity) {
			r := s.req
			nd := d
			nd.Capacity = copyWithout(d.Capacity, name)
			r.Device = &nd
			if s.still(r) {
				changed = true
				break
			}
		}
		if !changed && d.AllowMultipleAllocations != nil {
			r := s.req
			nd := d
			nd.AllowMultipleAllocations = nil
			r.Device = &nd
			changed = s.still(r)
		}
	}
}

func sortedNames[V any](m map[resourceapi.QualifiedName]V) []resourceapi.QualifiedName {
	var out []resourceapi.QualifiedName
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func copyWithout[V any](m map[resourceapi.QualifiedName]V, drop resourceapi.QualifiedName) map[resourceapi.QualifiedName]V {
	out := make(map[resourceapi.QualifiedName]V, len(m))
	for k, v := range m {
		if k != drop {
			out[k] = v
		}
	}
	return out
}

// tree: replace nodes (outermost first) by a same-typed descendant or a plain literal.
func (s *shrinker) tree(root *Node) {
	try := func(n *Node, with *Node) bool {
		saved := *n
		if with.Prec > n.Prec {
			with = paren(with)
		}
		*n = *with
		expr := root.String()
		r := s.req
		r.Expr = &expr
		if s.still(r) {
			return true
		}
		*n = saved
		return false
	}
	for progress := true; progress && s.trials > 0; {
		progress = false
		for _, n := range preorder(root) {
			var cands []*Node
			for _, d := range preorder(n)[1:] {
				if d.T.Eq(n.T) {
					cands = append(cands, clone(d))
				}
			}
			if lit := plainLiteral(n.T); lit != nil && lit.String() != n.String() {
				cands = append(cands, lit)
			}
			for _, c := range cands {
				if try(n, c) {
					progress = true
					break
				}
			}
			if progress || s.trials <= 0 {
				break
			}
		}
	}
}

func preorder(n *Node) []*Node {
	out := []*Node{n}
	for _, k := range n.Kids {
		out = append(out, preorder(k)...)
	}
	return out
}

func clone(n *Node) *Node {
	c := &Node{Parts: append([]string(nil), n.Parts...), T: n.T}
	for _, k := range n.Kids {
		c.Kids = append(c.Kids, clone(k))
	}
	return c
}

func plainLiteral(t *Type) *Node {
	text := map[Kind]string{KBool: "true", KInt: "0", KUint: "0u", KDouble: "0.0", KString: `""`,
		KBytes: `b""`, KNull: "null", KList: "[]", KMap: "{}", KQuantity: `quantity("1")`,
		KSemver: `semver("1.0.0")`, KIP: `ip("10.0.0.1")`, KCIDR: `cidr("10.0.0.0/8")`,
		KURL: `url("https://example.com")`, KOpt: "optional.none()", KDuration: `duration("1s")`,
		KTimestamp: `timestamp("2024-01-01T00:00:00Z")`, KType: "int", KDyn: "dyn(1)"}[t.K]
	if text == "" {
		return nil
	}
	return leaf(t, text)
}

// text: cut chunks of the expression's text (halves, quarters, ... single characters).
func (s *shrinker) text() {
	for size := len(*s.req.Expr) / 2; size >= 1 && s.trials > 0; size /= 2 {
		for i := 0; i+size <= len(*s.req.Expr) && s.trials > 0; {
			e := *s.req.Expr
			cut := e[:i] + e[i+size:]
			if !strings.ContainsRune(cut, '\uFFFD') && validUTF8(cut) {
				r := s.req
				r.Expr = &cut
				if s.still(r) {
					continue
				}
			}
			i += size
		}
	}
}

func validUTF8(s string) bool {
	return strings.ToValidUTF8(s, "\uFFFD") == s
}
