package celoracle

// The differential test's generator: seeded random CEL expressions over the DRA environment
// (every operator, macro and library function kube-scheduler v1.37.2 enables, nested, with
// literals near the edges and a share of ill-typed and malformed input) and random devices
// they are evaluated against. An expression is a tree of nodes so a difference can be shrunk
// by replacing a node with a simpler one of the same type.

import (
	"fmt"
	"math/rand/v2"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kind is the static type the generator means a node to have.
type Kind int

const (
	KBool Kind = iota
	KInt
	KUint
	KDouble
	KString
	KBytes
	KNull
	KList
	KMap
	KQuantity
	KSemver
	KIP
	KCIDR
	KURL
	KOpt
	KDuration
	KTimestamp
	KType
	KDyn
)

// Type is a generator type: a list has E, a map E (keys) and V, an optional E.
type Type struct {
	K    Kind
	E, V *Type
}

var (
	tBool      = &Type{K: KBool}
	tInt       = &Type{K: KInt}
	tUint      = &Type{K: KUint}
	tDouble    = &Type{K: KDouble}
	tString    = &Type{K: KString}
	tBytes     = &Type{K: KBytes}
	tNull      = &Type{K: KNull}
	tQuantity  = &Type{K: KQuantity}
	tSemver    = &Type{K: KSemver}
	tIP        = &Type{K: KIP}
	tCIDR      = &Type{K: KCIDR}
	tURL       = &Type{K: KURL}
	tDuration  = &Type{K: KDuration}
	tTimestamp = &Type{K: KTimestamp}
	tType      = &Type{K: KType}
	tDyn       = &Type{K: KDyn}
)

func listOf(e *Type) *Type   { return &Type{K: KList, E: e} }
func mapOf(k, v *Type) *Type { return &Type{K: KMap, E: k, V: v} }
func optOf(e *Type) *Type    { return &Type{K: KOpt, E: e} }

// Eq is structural equality.
func (t *Type) Eq(u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	return t.K == u.K && t.E.Eq(u.E) && t.V.Eq(u.V)
}

func (t *Type) String() string {
	names := [...]string{"bool", "int", "uint", "double", "string", "bytes", "null", "list", "map",
		"quantity", "semver", "ip", "cidr", "url", "optional", "duration", "timestamp", "type", "dyn"}
	switch t.K {
	case KList, KOpt:
		return names[t.K] + "(" + t.E.String() + ")"
	case KMap:
		return "map(" + t.E.String() + "," + t.V.String() + ")"
	}
	return names[t.K]
}

// comparable with < (the list library's comparable types)
func (t *Type) ordered() bool {
	switch t.K {
	case KInt, KUint, KDouble, KString, KBytes, KBool, KDuration, KTimestamp:
		return true
	}
	return false
}

// Node is one expression node: text parts around its kids (len(Parts) == len(Kids)+1).
type Node struct {
	Parts []string
	Kids  []*Node
	T     *Type
	Prec  int
}

func (n *Node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *Node) write(b *strings.Builder) {
	for i, p := range n.Parts {
		b.WriteString(p)
		if i < len(n.Kids) {
			n.Kids[i].write(b)
		}
	}
}

// Size counts the nodes.
func (n *Node) Size() int {
	s := 1
	for _, k := range n.Kids {
		s += k.Size()
	}
	return s
}

// Operator precedence of a node's text (0: primary, a call or a literal; 1: unary; 2: * / %;
// 3: + -; 4: relations and in; 5: &&; 6: ||; 7: ?:). A kid goes into parentheses where its
// text would otherwise bind differently.
var binPrec = map[string]int{"||": 6, "&&": 5, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
	"in": 4, "+": 3, "-": 3, "*": 2, "/": 2, "%": 2}

func paren(n *Node) *Node { return &Node{Parts: []string{"(", ")"}, Kids: []*Node{n}, T: n.T} }

// mk builds a node from a template whose "$" are the kids, in order: "$ op $", "$ ? $ : $",
// "!$" and "-$" are operators; elsewhere a kid followed by "." or "[" is a receiver.
func mk(t *Type, tmpl string, kids ...*Node) *Node {
	parts := strings.Split(tmpl, "$")
	if len(parts) != len(kids)+1 {
		panic(fmt.Sprintf("template %q has %d holes for %d kids", tmpl, len(parts)-1, len(kids)))
	}
	n := &Node{Parts: parts, Kids: kids, T: t}
	wrap := func(i, maxPrec int) {
		if kids[i].Prec > maxPrec {
			kids[i] = paren(kids[i])
		}
	}
	switch {
	case len(kids) == 2 && parts[0] == "" && parts[2] == "" && binPrec[strings.TrimSpace(parts[1])] > 0 &&
		strings.HasPrefix(parts[1], " ") && strings.HasSuffix(parts[1], " "):
		p := binPrec[strings.TrimSpace(parts[1])]
		n.Prec = p
		wrap(0, p)   // left-associative
		wrap(1, p-1) // a right operand of the same level needs parentheses
	case len(kids) == 3 && tmpl == "$ ? $ : $":
		n.Prec = 7
		wrap(0, 6)
		wrap(1, 6)
	case len(kids) == 1 && (tmpl == "!$" || tmpl == "-$"):
		n.Prec = 1
		wrap(0, 1)
	default:
		for i := range kids {
			if strings.HasPrefix(parts[i+1], ".") || strings.HasPrefix(parts[i+1], "[") {
				wrap(i, 0)
			}
		}
	}
	return n
}

func leaf(t *Type, text string) *Node {
	n := &Node{Parts: []string{text}, T: t}
	if strings.HasPrefix(text, "-") {
		n.Prec = 1
	}
	return n
}

// bin is mk for a binary operator.
func bin(t *Type, op string, a, b *Node) *Node { return mk(t, "$ "+op+" $", a, b) }

// Case is one generated request with what the driver needs to judge it.
type Case struct {
	Req  Request
	Root *Node
	// OrderSensitive: the expression iterates a map, whose order Go randomizes, so more
	// than one answer can be right; the driver collects Go's answers over several runs.
	OrderSensitive bool
	// Used names the productions the expression used (the generator's own coverage test).
	Used []string
}

type scopeVar struct {
	name string
	t    *Type
}

// Gen generates one case; NewCase makes one per (seed, index), reproducibly.
type Gen struct {
	r       *rand.Rand
	dev     *Device
	scope   []scopeVar
	budget  int
	illAt   int
	order   bool
	used    map[string]bool
	noMaps  bool // inside format() arguments: no map values (their text is order-dependent)
	inLit   int  // inside a list or map literal: attributes (dyn) would mix types, mostly avoided
	maxDeep int
}

// NewCase generates case i of seed.
func NewCase(seed int64, i int) *Case {
	g := &Gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(i))), used: map[string]bool{}, illAt: -1}
	return g.gen()
}

func (g *Gen) p(x float64) bool { return g.r.Float64() < x }
func (g *Gen) n(k int) int      { return g.r.IntN(k) }

func pick[T any](g *Gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

func (g *Gen) gen() *Case {
	c := &Case{}
	// devices first: the expression leans on the names the (first) device has
	if g.p(0.12) {
		k := 2 + g.n(3)
		for j := 0; j < k; j++ {
			c.Req.Devices = append(c.Req.Devices, *g.device())
		}
		g.dev = &c.Req.Devices[0]
	} else {
		c.Req.Device = g.device()
		g.dev = c.Req.Device
	}
	if g.p(0.15) {
		c.Req.Env = "new"
	}
	if g.p(0.02) {
		lim := pick(g, []uint64{0, 1, 5, 10, 50, 100, 1000, 10000})
		c.Req.CostLimit = &lim
	}
	g.maxDeep = 2 + g.n(4)
	g.budget = 8 + g.n(40)
	if g.p(0.07) {
		g.illAt = g.n(12)
	}
	var root *Node
	switch x := g.r.Float64(); {
	case x < 0.955:
		root = g.expr(tBool, 0)
	case x < 0.98:
		root = g.expr(g.anyType(1), 0) // not bool: "must evaluate to bool", or dyn at run time
	default:
		root = g.attrRef(pick(g, []Kind{KBool, KInt, KString, KSemver}))
	}
	c.Root = root
	expr := root.String()
	if g.p(0.025) {
		expr = g.mangle(expr)
		g.used["syntax-mangle"] = true
	}
	c.Req.Expr = &expr
	c.OrderSensitive = g.order
	for u := range g.used {
		c.Used = append(c.Used, u)
	}
	return c
}

// mangle breaks the text: a syntax error (mostly), at a random place.
func (g *Gen) mangle(s string) string {
	if s == "" {
		return ")"
	}
	i := g.n(len(s))
	for i > 0 && !utf8Start(s[i]) {
		i--
	}
	switch g.n(4) {
	case 0:
		return s[:i]
	case 1:
		return s[:i] + pick(g, []string{")", "(", "]", "[", ",", ".", "?", ":", "!", "'", "\"", "&", "|", "=", "#", "@", "`", "\\", "1a", "in", " . "}) + s[i:]
	case 2:
		j := i + 1
		for j < len(s) && !utf8Start(s[j]) {
			j++
		}
		return s[:i] + s[j:]
	default:
		return s + pick(g, []string{")", " &&", " +", "[0", "}", ".x(", " ? 1"})
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// The schema devices are drawn from: names and the kind of value they usually have.
var schema = []struct {
	name string
	k    Kind
}{
	{"model", KString}, {"productName", KString}, {"family", KString}, {"uuid", KString},
	{"cores", KInt}, {"index", KInt}, {"memoryMiB", KInt},
	{"ecc", KBool}, {"mig", KBool},
	{"driverVersion", KSemver}, {"cudaVersion", KSemver},
}

var (
	drivers      = []string{"gpu.example.com", "gpu.example.com", "gpu.example.com", "dra.example.com", "x.y"}
	otherDomains = []string{"dra.example.com", "example.com", "gpu.example.com"}
	capNames     = []string{"memory", "cores", "slices", "bandwidth"}

	attrStrings = []string{"Tesla-M40", "A100", "a100", "H100-SXM", "", "gpu-0", "GPU 1", "Ünïcödé",
		"日本", "😀", "a\tb", "tesla", "1.5Gi", "1.2.3", "10.0.0.1", "true", "42", "%s", "\\d+"}
	attrVersions = []string{"1.2.3", "0.0.1", "535.104.5", "12.2.0", "1.2.3-rc.1", "1.2.3+build.7",
		"2.0.0-alpha.1+meta", "1.0.0-0", "10.20.30", "1.2.3-beta", "999999999999.1.1",
		"18446744073709551615.0.0", "1.0.0-alpha.beta.1", "0.0.0"}
	badVersions = []string{"1.2", "v1.2.3", "01.2.3", "1.2.3-01", "", "1.2.3.4", "x"}
	quantities  = []string{"0", "1", "8", "100m", "1.5Gi", "12Gi", "40Gi", "80Gi", "1e3", "0.1",
		"1Ki", "1k", "2M", "1E", "500Mi", "1.5", "7Ti", "123456789", "9223372036854775807",
		"-1", "1n", "5e-3", "0.000001", "1Pi", "2.5Ei", "8E", "+1", "1e18", "16Gi", "24Gi"}
)

func (g *Gen) device() *Device {
	d := &Device{Driver: pick(g, drivers),
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{},
		Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}}
	if g.p(0.3) {
		b := g.p(0.5)
		d.AllowMultipleAllocations = &b
	}
	prefixed := func(name string) string {
		if g.p(0.2) {
			// never the driver's own domain: "d/x" and "x" would be one key, set in map order
			dom := pick(g, otherDomains)
			if dom != d.Driver {
				return dom + "/" + name
			}
		}
		return name
	}
	bad := g.p(0.015)
	for _, s := range schema {
		if !g.p(0.75) {
			continue
		}
		k := s.k
		if g.p(0.06) {
			k = pick(g, []Kind{KBool, KInt, KString, KSemver})
		}
		var a resourceapi.DeviceAttribute
		switch k {
		case KInt:
			v := g.attrInt()
			a.IntValue = &v
		case KBool:
			v := g.p(0.5)
			a.BoolValue = &v
		case KString:
			v := pick(g, attrStrings)
			a.StringValue = &v
		case KSemver:
			v := pick(g, attrVersions)
			if bad {
				v, bad = pick(g, badVersions), false
			}
			a.VersionValue = &v
		}
		d.Attributes[resourceapi.QualifiedName(prefixed(s.name))] = a
	}
	if bad && g.p(0.3) {
		d.Attributes["broken"] = resourceapi.DeviceAttribute{} // "unsupported attribute value"
	}
	for _, name := range capNames {
		if g.p(0.5) {
			q, text := resourceapi.QualifiedName(prefixed(name)), pick(g, quantities)
			d.Capacity[q] = resourceapi.DeviceCapacity{Value: resource.MustParse(text)}
			if d.capText == nil {
				d.capText = map[resourceapi.QualifiedName]string{}
			}
			d.capText[q] = text
		}
	}
	d.Canonicalize()
	return d
}

func (g *Gen) attrInt() int64 {
	if g.p(0.85) {
		return int64(g.n(120)) - 4
	}
	return pick(g, []int64{9223372036854775807, -9223372036854775808, 1 << 32, -1, 0, 81920, 1 << 53})
}

// expr: a node of type t (most of the time: once per some expressions a node of another type
// goes where t belongs, for compile errors).
func (g *Gen) expr(t *Type, depth int) *Node {
	if g.illAt >= 0 {
		if g.illAt == 0 {
			g.illAt = -1
			g.used["ill-typed"] = true
			return g.expr(g.otherType(t), depth)
		}
		g.illAt--
	}
	g.budget--
	if depth >= g.maxDeep || g.budget <= 0 || g.p([]float64{0.05, 0.3, 0.5, 0.7, 0.85, 1}[min(depth, 5)]) {
		return g.leaf(t)
	}
	for tries := 0; tries < 8; tries++ {
		if n := g.production(t, depth+1); n != nil {
			return n
		}
	}
	return g.leaf(t)
}

func (g *Gen) otherType(t *Type) *Type {
	for {
		u := g.anyType(1)
		if !u.Eq(t) && u.K != KDyn {
			return u
		}
	}
}

// anyType picks a type, weighted toward the common ones; lvl bounds nesting.
func (g *Gen) anyType(lvl int) *Type {
	x := g.n(100)
	switch {
	case x < 18:
		return tInt
	case x < 36:
		return tString
	case x < 46:
		return tBool
	case x < 52:
		return tDouble
	case x < 56:
		return tUint
	case x < 66:
		if lvl > 2 {
			return tInt
		}
		return listOf(g.elemType(lvl + 1))
	case x < 71:
		if lvl > 2 {
			return tString
		}
		return mapOf(pick(g, []*Type{tString, tString, tInt, tBool, tUint}), g.elemType(lvl+1))
	case x < 77:
		return tQuantity
	case x < 82:
		return tSemver
	case x < 84:
		return tBytes
	case x < 85:
		return tNull
	case x < 87:
		return tDuration
	case x < 89:
		return tTimestamp
	case x < 91:
		return tIP
	case x < 93:
		return tCIDR
	case x < 94:
		return tURL
	case x < 96:
		if lvl > 2 {
			return tInt
		}
		return optOf(g.elemType(lvl + 1))
	case x < 98:
		return tType
	}
	return tDyn
}

func (g *Gen) elemType(lvl int) *Type {
	switch x := g.n(20); {
	case x < 7:
		return tInt
	case x < 13:
		return tString
	case x < 15:
		return tBool
	case x < 16:
		return tDouble
	case x < 17:
		return tUint
	case x < 18:
		if lvl > 2 {
			return tInt
		}
		return listOf(g.elemType(lvl + 1))
	case x < 19:
		return tDyn
	}
	return tQuantity
}

// prod is one way to build a node of the wanted type: nil when it does not apply.
type prod struct {
	name string
	w    int
	f    func() *Node
}

func (g *Gen) choose(ps []prod) *Node {
	total := 0
	for _, p := range ps {
		total += p.w
	}
	x := g.n(total)
	for _, p := range ps {
		if x < p.w {
			n := p.f()
			if n != nil {
				g.used[p.name] = true
			}
			return n
		}
		x -= p.w
	}
	return nil
}

// with runs f with a variable in scope.
func (g *Gen) with(vars []scopeVar, f func() *Node) *Node {
	saved := len(g.scope)
	g.scope = append(g.scope, vars...)
	n := f()
	g.scope = g.scope[:saved]
	return n
}

var (
	compVars = []string{"x", "y", "x", "e", "z"}
	bindVars = []string{"a", "b", "dra", "a"}
)

// rangeOver builds a range for a comprehension: a list, or a map (then the order matters).
func (g *Gen) rangeOver(depth int, allowMap bool) (*Node, *Type, *Type) {
	if allowMap && g.p(0.3) {
		var m *Node
		switch x := g.r.Float64(); {
		case x < 0.1:
			// the domains (the attribute maps answer any domain, with an empty map)
			m = leaf(mapOf(tString, mapOf(tString, tDyn)), "device.attributes")
		case x < 0.15:
			m = leaf(mapOf(tString, mapOf(tString, tQuantity)), "device.capacity")
		case x < 0.55:
			m = g.attrMap(KDyn)
		default:
			m = g.expr(mapOf(pick(g, []*Type{tString, tInt}), g.elemType(2)), depth)
		}
		g.order = true
		return m, m.T.E, m.T.V
	}
	e := g.elemType(1)
	l := g.expr(listOf(e), depth)
	return l, tInt, e
}

func (g *Gen) production(t *Type, d int) *Node {
	ps := g.common(t, d)
	switch t.K {
	case KBool:
		ps = append(ps, g.boolProds(d)...)
	case KInt:
		ps = append(ps, g.intProds(d)...)
	case KUint:
		ps = append(ps, g.uintProds(d)...)
	case KDouble:
		ps = append(ps, g.doubleProds(d)...)
	case KString:
		ps = append(ps, g.stringProds(d)...)
	case KBytes:
		ps = append(ps,
			prod{"bytes()", 3, func() *Node { return mk(t, "bytes($)", g.expr(tString, d)) }},
			prod{"bytes+", 2, func() *Node { return mk(t, "$ + $", g.expr(t, d), g.expr(t, d)) }})
	case KList:
		ps = append(ps, g.listProds(t, d)...)
	case KMap:
		ps = append(ps, g.mapProds(t, d)...)
	case KQuantity:
		ps = append(ps,
			prod{"quantity()", 5, func() *Node { return mk(t, "quantity($)", g.quantityString(d)) }},
			prod{"q.add", 2, func() *Node {
				return mk(t, "$.add($)", g.expr(t, d), g.expr(pick(g, []*Type{tQuantity, tInt}), d))
			}},
			prod{"q.sub", 2, func() *Node {
				return mk(t, "$.sub($)", g.expr(t, d), g.expr(pick(g, []*Type{tQuantity, tInt}), d))
			}},
			prod{"capacity", 5, func() *Node { return g.capRef() }})
	case KSemver:
		ps = append(ps,
			prod{"semver()", 5, func() *Node { return mk(t, "semver($)", g.semverString(d)) }},
			prod{"semver(s,norm)", 2, func() *Node { return mk(t, "semver($, $)", g.semverString(d), g.expr(tBool, d)) }},
			prod{"attr-version", 4, func() *Node { return g.attrRef(KSemver) }})
	case KIP:
		ps = append(ps,
			prod{"ip()", 4, func() *Node { return mk(t, "ip($)", g.stringFrom(ipStrings, d)) }},
			prod{"cidr.ip", 1, func() *Node { return mk(t, "$.ip()", g.expr(tCIDR, d)) }})
	case KCIDR:
		ps = append(ps,
			prod{"cidr()", 4, func() *Node { return mk(t, "cidr($)", g.stringFrom(cidrStrings, d)) }},
			prod{"cidr.masked", 1, func() *Node { return mk(t, "$.masked()", g.expr(t, d)) }})
	case KURL:
		ps = append(ps, prod{"url()", 4, func() *Node { return mk(t, "url($)", g.stringFrom(urlStrings, d)) }})
	case KOpt:
		ps = append(ps, g.optProds(t, d)...)
	case KDuration:
		ps = append(ps,
			prod{"duration()", 4, func() *Node { return mk(t, "duration($)", g.stringFrom(durationStrings, d)) }},
			prod{"dur+", 1, func() *Node { return mk(t, "$ + $", g.expr(t, d), g.expr(t, d)) }},
			prod{"dur-", 1, func() *Node { return mk(t, "$ - $", g.expr(t, d), g.expr(t, d)) }},
			prod{"ts-ts", 1, func() *Node { return mk(t, "$ - $", g.expr(tTimestamp, d), g.expr(tTimestamp, d)) }})
	case KTimestamp:
		ps = append(ps,
			prod{"timestamp()", 4, func() *Node { return mk(t, "timestamp($)", g.stringFrom(timestampStrings, d)) }},
			prod{"timestamp(int)", 1, func() *Node { return mk(t, "timestamp($)", g.expr(tInt, d)) }},
			prod{"ts+dur", 1, func() *Node { return mk(t, "$ + $", g.expr(t, d), g.expr(tDuration, d)) }},
			prod{"ts-dur", 1, func() *Node { return mk(t, "$ - $", g.expr(t, d), g.expr(tDuration, d)) }})
	case KType:
		ps = append(ps, prod{"type()", 4, func() *Node { return mk(t, "type($)", g.expr(g.anyType(1), d)) }})
	case KDyn:
		ps = append(ps,
			prod{"dyn()", 3, func() *Node { return mk(t, "dyn($)", g.expr(g.anyType(1), d)) }},
			prod{"attr", 6, func() *Node { return g.attrRef(pick(g, []Kind{KBool, KInt, KString, KSemver})) }})
	}
	return g.choose(ps)
}

// common: productions of any type.
func (g *Gen) common(t *Type, d int) []prod {
	ps := []prod{
		{"?:", 3, func() *Node { return mk(t, "$ ? $ : $", g.expr(tBool, d), g.expr(t, d), g.expr(t, d)) }},
		{"()", 1, func() *Node { return mk(t, "($)", g.expr(t, d)) }},
		{"cel.bind", 2, func() *Node {
			name := pick(g, bindVars)
			it := g.anyType(1)
			init := g.expr(it, d)
			body := g.with([]scopeVar{{name, it}}, func() *Node { return g.expr(t, d) })
			return mk(t, "cel.bind("+name+", $, $)", init, body)
		}},
		{"list[i]", 2, func() *Node { return mk(t, "$[$]", g.expr(listOf(t), d), g.index(d)) }},
		{"map[k]", 2, func() *Node {
			k := pick(g, []*Type{tString, tInt, tBool})
			return mk(t, "$[$]", g.expr(mapOf(k, t), d), g.expr(k, d))
		}},
		{"opt.orValue", 2, func() *Node { return mk(t, "$.orValue($)", g.expr(optOf(t), d), g.expr(t, d)) }},
		{"opt.value", 1, func() *Node { return mk(t, "$.value()", g.expr(optOf(t), d)) }},
	}
	if t.K != KDyn && t.K != KType && g.inLit == 0 {
		ps = append(ps, prod{"dyn-wrap", 1, func() *Node { return mk(t, "dyn($)", g.expr(t, d)) }})
	}
	return ps
}

func (g *Gen) boolProds(d int) []prod {
	t := tBool
	binop := func(op string) func() *Node {
		return func() *Node { return mk(t, "$ "+op+" $", g.expr(t, d), g.expr(t, d)) }
	}
	return []prod{
		{"&&", 8, binop("&&")},
		{"||", 7, binop("||")},
		{"!", 3, func() *Node { return mk(t, "!$", g.expr(t, d)) }},
		{"<", 10, func() *Node {
			op := pick(g, []string{"<", "<=", ">", ">="})
			a := pick(g, []*Type{tInt, tInt, tInt, tUint, tDouble, tString, tBytes, tBool, tDuration, tTimestamp})
			b := a
			if g.p(0.15) && (a.K == KInt || a.K == KUint || a.K == KDouble) {
				b = pick(g, []*Type{tInt, tUint, tDouble}) // cross-type numeric comparison
			}
			return mk(t, "$ "+op+" $", g.expr(a, d), g.expr(b, d))
		}},
		{"==", 12, func() *Node {
			op := pick(g, []string{"==", "!="})
			a := g.anyType(1)
			b := a
			if g.p(0.1) && (a.K == KInt || a.K == KUint || a.K == KDouble) {
				b = pick(g, []*Type{tInt, tUint, tDouble})
			}
			return mk(t, "$ "+op+" $", g.expr(a, d), g.expr(b, d))
		}},
		{"in-list", 4, func() *Node {
			e := g.elemType(1)
			return mk(t, "$ in $", g.expr(e, d), g.expr(listOf(e), d))
		}},
		{"in-map", 4, func() *Node {
			if g.p(0.15) {
				m := leaf(mapOf(tString, tDyn), pick(g, []string{"device.attributes", "device.capacity"}))
				return bin(t, "in", leaf(tString, quoteCEL(g.domain())), m)
			}
			if g.p(0.6) {
				return mk(t, "$ in $", g.nameString(), g.attrMap(KDyn))
			}
			m := mapOf(pick(g, []*Type{tString, tInt}), g.elemType(2))
			return mk(t, "$ in $", g.expr(m.E, d), g.expr(m, d))
		}},
		{"has", 5, func() *Node {
			if g.p(0.08) {
				// a domain without dots can be selected: true whether it is there or not
				return leaf(t, "has(device."+pick(g, []string{"attributes", "capacity"})+"."+pick(g, []string{"nope", "gpu", "x"})+")")
			}
			if g.p(0.7) {
				return mk(t, "has($."+g.attrName(KDyn)+")", g.attrMap(KDyn))
			}
			return mk(t, "has($."+pick(g, []string{"a", "b", "memory"})+")", g.expr(mapOf(tString, g.elemType(2)), d))
		}},
		{"str-pred", 5, func() *Node {
			f := pick(g, []string{"contains", "startsWith", "endsWith"})
			return mk(t, "$."+f+"($)", g.expr(tString, d), g.expr(tString, d))
		}},
		{"matches", 4, func() *Node {
			if g.p(0.2) {
				return mk(t, "matches($, $)", g.expr(tString, d), g.regex(d))
			}
			return mk(t, "$.matches($)", g.expr(tString, d), g.regex(d))
		}},
		{"is-fn", 4, func() *Node {
			switch g.n(6) {
			case 0:
				return mk(t, "isQuantity($)", g.quantityString(d))
			case 1:
				return mk(t, "isSemver($)", g.semverString(d))
			case 2:
				return mk(t, "isSemver($, $)", g.semverString(d), g.expr(tBool, d))
			case 3:
				return mk(t, "isIP($)", g.stringFrom(ipStrings, d))
			case 4:
				return mk(t, "isCIDR($)", g.stringFrom(cidrStrings, d))
			}
			return mk(t, "isURL($)", g.stringFrom(urlStrings, d))
		}},
		{"q-pred", 5, func() *Node {
			switch g.n(3) {
			case 0:
				return mk(t, "$.isInteger()", g.expr(tQuantity, d))
			case 1:
				return mk(t, "$.isGreaterThan($)", g.expr(tQuantity, d), g.expr(tQuantity, d))
			}
			return mk(t, "$.isLessThan($)", g.expr(tQuantity, d), g.expr(tQuantity, d))
		}},
		{"sv-pred", 4, func() *Node {
			f := pick(g, []string{"isGreaterThan", "isLessThan"})
			return mk(t, "$."+f+"($)", g.expr(tSemver, d), g.expr(tSemver, d))
		}},
		{"ip-pred", 2, func() *Node {
			if g.p(0.25) {
				return mk(t, "ip.isCanonical($)", g.stringFrom(ipStrings, d))
			}
			f := pick(g, []string{"isLoopback", "isUnspecified", "isGlobalUnicast", "isLinkLocalMulticast", "isLinkLocalUnicast"})
			return mk(t, "$."+f+"()", g.expr(tIP, d))
		}},
		{"cidr-pred", 2, func() *Node {
			if g.p(0.5) {
				return mk(t, "$.containsIP($)", g.expr(tCIDR, d), g.expr(pick(g, []*Type{tIP, tString}), d))
			}
			return mk(t, "$.containsCIDR($)", g.expr(tCIDR, d), g.expr(pick(g, []*Type{tCIDR, tString}), d))
		}},
		{"all/exists", 7, func() *Node {
			f := pick(g, []string{"all", "exists", "exists_one", "all", "exists"})
			r, _, et := g.rangeOver(d, true)
			if r.T.K == KMap {
				et = r.T.E
			}
			v := pick(g, compVars)
			body := g.with([]scopeVar{{v, et}}, func() *Node { return g.expr(t, d) })
			return mk(t, "$."+f+"("+v+", $)", r, body)
		}},
		{"all2", 3, func() *Node {
			f := pick(g, []string{"all", "exists", "existsOne", "exists_one"})
			r, kt, vt := g.rangeOver(d, true)
			k, v := pick(g, []string{"i", "k", "i"}), pick(g, []string{"v", "w", "v"})
			body := g.with([]scopeVar{{k, kt}, {v, vt}}, func() *Node { return g.expr(t, d) })
			return mk(t, "$."+f+"("+k+", "+v+", $)", r, body)
		}},
		{"isSorted", 2, func() *Node { return mk(t, "$.isSorted()", g.expr(listOf(g.orderedType()), d)) }},
		{"sets", 3, func() *Node {
			f := pick(g, []string{"sets.contains", "sets.equivalent", "sets.intersects"})
			e := g.elemType(1)
			return mk(t, f+"($, $)", g.expr(listOf(e), d), g.expr(listOf(e), d))
		}},
		{"includes", 2, func() *Node {
			e := g.elemType(1)
			if g.p(0.3) {
				return mk(t, "$.includes($)", g.attrRef(KString), g.expr(tString, d))
			}
			return mk(t, "$.includes($)", g.expr(listOf(e), d), g.expr(e, d))
		}},
		{"hasValue", 3, func() *Node { return mk(t, "$.hasValue()", g.expr(optOf(g.elemType(1)), d)) }},
		{"attr-bool", 10, func() *Node { return g.attrRef(KBool) }},
		{"attr-cmp", 14, func() *Node { return g.attrCompare(d) }},
		{"bool()", 1, func() *Node { return mk(t, "bool($)", g.stringFrom(boolStrings, d)) }},
		{"type==", 2, func() *Node {
			return bin(t, pick(g, []string{"==", "!="}), mk(tType, "type($)", g.expr(g.anyType(1), d)), g.typeName())
		}},
		{"format.validate", 1, func() *Node {
			f := pick(g, []string{"dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName",
				"labelValue", "uri", "uuid", "byte", "date", "datetime"})
			if g.p(0.3) {
				return mk(t, "format.named($).hasValue()", g.stringFrom([]string{`"` + f + `"`, `"nope"`}, d))
			}
			return mk(t, "format."+f+"().validate($).hasValue()", g.expr(tString, d))
		}},
		{"allowMultiple", 2, func() *Node { return leaf(t, "device.allowMultipleAllocations") }},
	}
}

// attrCompare is the typical selector: an attribute or capacity against a literal.
func (g *Gen) attrCompare(d int) *Node {
	t := tBool
	switch g.n(6) {
	case 0, 1:
		return mk(t, "$ "+pick(g, []string{"==", "!=", "<", ">=", ">"})+" $", g.attrRef(KInt), g.smallInt(d))
	case 2:
		op := pick(g, []string{"==", "!=", "==", "<"})
		return mk(t, "$ "+op+" $", g.attrRef(KString), g.leaf(tString))
	case 3:
		q := mk(tQuantity, "quantity($)", g.quantityString(d))
		switch g.n(4) {
		case 0:
			return mk(t, "$."+pick(g, []string{"isGreaterThan", "isLessThan"})+"($)", g.capRef(), q)
		}
		return bin(t, pick(g, []string{">=", "<", "==", ">"}), mk(tInt, "$.compareTo($)", g.capRef(), q), leaf(tInt, "0"))
	case 4:
		v := mk(tSemver, "semver($)", g.semverString(d))
		switch g.n(4) {
		case 0:
			return mk(t, "$."+pick(g, []string{"isGreaterThan", "isLessThan"})+"($)", g.attrRef(KSemver), v)
		}
		return bin(t, pick(g, []string{">=", "<", "==", ">"}), mk(tInt, "$.compareTo($)", g.attrRef(KSemver), v), leaf(tInt, "0"))
	}
	return mk(t, "$ == $", g.attrRef(KBool), g.leaf(tBool))
}

func (g *Gen) orderedType() *Type {
	return pick(g, []*Type{tInt, tInt, tString, tString, tDouble, tUint, tBool, tBytes, tDuration, tTimestamp})
}

func (g *Gen) intProds(d int) []prod {
	t := tInt
	arith := func() *Node {
		op := pick(g, []string{"+", "-", "*", "/", "%", "+", "-"})
		return mk(t, "$ "+op+" $", g.expr(t, d), g.expr(t, d))
	}
	return []prod{
		{"int-arith", 12, arith},
		{"int-neg", 2, func() *Node { return mk(t, "-$", g.expr(t, d)) }},
		{"size", 6, func() *Node {
			x := pick(g, []*Type{tString, tBytes, listOf(g.elemType(1)), mapOf(tString, tInt)})
			if g.p(0.3) {
				return mk(t, "$.size()", g.expr(x, d))
			}
			if g.p(0.2) {
				return mk(t, "size($)", g.attrMap(KDyn))
			}
			return mk(t, "size($)", g.expr(x, d))
		}},
		{"int()", 4, func() *Node {
			return mk(t, "int($)", g.expr(pick(g, []*Type{tUint, tDouble, tString, tInt, tTimestamp, tDyn}), d))
		}},
		{"str-index", 3, func() *Node {
			switch g.n(3) {
			case 0:
				return mk(t, "$.indexOf($)", g.expr(tString, d), g.expr(tString, d))
			case 1:
				return mk(t, "$.lastIndexOf($)", g.expr(tString, d), g.expr(tString, d))
			}
			f := pick(g, []string{"indexOf", "lastIndexOf"})
			return mk(t, "$."+f+"($, $)", g.expr(tString, d), g.expr(tString, d), g.smallInt(d))
		}},
		{"q-int", 4, func() *Node {
			switch g.n(3) {
			case 0:
				return mk(t, "$.compareTo($)", g.expr(tQuantity, d), g.expr(tQuantity, d))
			case 1:
				return mk(t, "$.asInteger()", g.expr(tQuantity, d))
			}
			if g.p(0.1) {
				return mk(t, "$.sign()", g.expr(tQuantity, d)) // not a member: no matching overload
			}
			return mk(t, "sign($)", g.expr(tQuantity, d))
		}},
		{"sv-int", 4, func() *Node {
			if g.p(0.25) {
				return mk(t, "$.compareTo($)", g.expr(tSemver, d), g.expr(tSemver, d))
			}
			return mk(t, "$."+pick(g, []string{"major", "minor", "patch"})+"()", g.expr(tSemver, d))
		}},
		{"list-int", 4, func() *Node {
			switch g.n(4) {
			case 0:
				return mk(t, "$."+pick(g, []string{"sum", "min", "max"})+"()", g.expr(listOf(tInt), d))
			case 1:
				e := g.elemType(1)
				return mk(t, "$."+pick(g, []string{"indexOf", "lastIndexOf"})+"($)", g.expr(listOf(e), d), g.expr(e, d))
			case 2:
				return mk(t, "$.size()", g.expr(listOf(g.elemType(1)), d))
			}
			return mk(t, "$."+pick(g, []string{"min", "max"})+"()", g.expr(listOf(tInt), d))
		}},
		{"ip-int", 1, func() *Node {
			if g.p(0.5) {
				return mk(t, "$.family()", g.expr(tIP, d))
			}
			return mk(t, "$.prefixLength()", g.expr(tCIDR, d))
		}},
		{"ts-int", 1, func() *Node {
			f := pick(g, []string{"getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds"})
			if g.p(0.3) {
				return mk(t, "$."+f+"($)", g.expr(tTimestamp, d), g.stringFrom(tzStrings, d))
			}
			return mk(t, "$."+f+"()", g.expr(tTimestamp, d))
		}},
		{"dur-int", 1, func() *Node {
			f := pick(g, []string{"getHours", "getMinutes", "getSeconds", "getMilliseconds"})
			return mk(t, "$."+f+"()", g.expr(tDuration, d))
		}},
		{"attr-int", 8, func() *Node { return g.attrRef(KInt) }},
	}
}

func (g *Gen) uintProds(d int) []prod {
	t := tUint
	return []prod{
		{"uint-arith", 6, func() *Node {
			op := pick(g, []string{"+", "-", "*", "/", "%"})
			return mk(t, "$ "+op+" $", g.expr(t, d), g.expr(t, d))
		}},
		{"uint()", 4, func() *Node {
			return mk(t, "uint($)", g.expr(pick(g, []*Type{tInt, tDouble, tString, tUint}), d))
		}},
		{"list-uint", 1, func() *Node {
			return mk(t, "$."+pick(g, []string{"sum", "min", "max"})+"()", g.expr(listOf(tUint), d))
		}},
	}
}

func (g *Gen) doubleProds(d int) []prod {
	t := tDouble
	return []prod{
		{"double-arith", 6, func() *Node {
			op := pick(g, []string{"+", "-", "*", "/"})
			return mk(t, "$ "+op+" $", g.expr(t, d), g.expr(t, d))
		}},
		{"double-neg", 1, func() *Node { return mk(t, "-$", g.expr(t, d)) }},
		{"double()", 4, func() *Node {
			return mk(t, "double($)", g.expr(pick(g, []*Type{tInt, tUint, tString, tDouble}), d))
		}},
		{"q-float", 3, func() *Node { return mk(t, "$.asApproximateFloat()", g.expr(tQuantity, d)) }},
		{"list-double", 1, func() *Node {
			return mk(t, "$."+pick(g, []string{"sum", "min", "max"})+"()", g.expr(listOf(tDouble), d))
		}},
	}
}

func (g *Gen) stringProds(d int) []prod {
	t := tString
	return []prod{
		{"str+", 5, func() *Node { return mk(t, "$ + $", g.expr(t, d), g.expr(t, d)) }},
		{"string()", 5, func() *Node {
			return mk(t, "string($)", g.expr(pick(g, []*Type{tInt, tUint, tDouble, tBool, tBytes, tString, tDuration, tTimestamp, tIP, tCIDR, tDyn}), d))
		}},
		{"case", 4, func() *Node {
			return mk(t, "$."+pick(g, []string{"lowerAscii", "upperAscii", "trim"})+"()", g.expr(t, d))
		}},
		{"replace", 2, func() *Node {
			if g.p(0.3) {
				return mk(t, "$.replace($, $, $)", g.expr(t, d), g.expr(t, d), g.expr(t, d), g.smallInt(d))
			}
			return mk(t, "$.replace($, $)", g.expr(t, d), g.expr(t, d), g.expr(t, d))
		}},
		{"substring", 3, func() *Node {
			if g.p(0.5) {
				return mk(t, "$.substring($)", g.expr(t, d), g.smallInt(d))
			}
			return mk(t, "$.substring($, $)", g.expr(t, d), g.smallInt(d), g.smallInt(d))
		}},
		{"charAt", 2, func() *Node { return mk(t, "$.charAt($)", g.expr(t, d), g.smallInt(d)) }},
		{"join", 3, func() *Node {
			if g.p(0.4) {
				return mk(t, "$.join()", g.expr(listOf(t), d))
			}
			return mk(t, "$.join($)", g.expr(listOf(t), d), g.expr(t, d))
		}},
		{"strings.quote", 1, func() *Node { return mk(t, "strings.quote($)", g.expr(t, d)) }},
		{"format", 3, func() *Node {
			f := g.stringFrom(formatStrings, d)
			saved := g.noMaps
			g.noMaps = true
			defer func() { g.noMaps = saved }()
			var args *Node
			if g.p(0.3) {
				args = g.expr(listOf(tDyn), d)
			} else {
				e := g.elemType(2)
				args = g.listLiteral(listOf(e), d, 1+g.n(2))
			}
			return mk(t, "$.format($)", f, args)
		}},
		{"find", 2, func() *Node { return mk(t, "$.find($)", g.expr(t, d), g.regex(d)) }},
		{"url-get", 2, func() *Node {
			f := pick(g, []string{"getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"})
			return mk(t, "$."+f+"()", g.expr(tURL, d))
		}},
		{"driver", 4, func() *Node { return leaf(t, "device.driver") }},
		{"attr-string", 8, func() *Node { return g.attrRef(KString) }},
	}
}

func (g *Gen) listProds(t *Type, d int) []prod {
	e := t.E
	ps := []prod{
		{"list-lit", 6, func() *Node { return g.listLiteral(t, d, g.listLen()) }},
		{"list+", 3, func() *Node { return mk(t, "$ + $", g.expr(t, d), g.expr(t, d)) }},
		{"map()", 4, func() *Node {
			// over a map, the list comes in Go's random order: sorted, so that Go's answers
			// do not depend on it (the order of errors still does)
			r, _, et := g.rangeOver(d, !g.noMaps && e.ordered())
			if r.T.K == KMap {
				et = r.T.E
			}
			v := pick(g, compVars)
			n := g.with([]scopeVar{{v, et}}, func() *Node {
				if g.p(0.2) {
					return mk(t, "$.map("+v+", $, $)", r, g.expr(tBool, d), g.expr(e, d))
				}
				return mk(t, "$.map("+v+", $)", r, g.expr(e, d))
			})
			if r.T.K == KMap {
				n = mk(t, "$.sort()", n)
			}
			return n
		}},
		{"filter()", 3, func() *Node {
			r := g.expr(t, d)
			v := pick(g, compVars)
			return mk(t, "$.filter("+v+", $)", r, g.with([]scopeVar{{v, e}}, func() *Node { return g.expr(tBool, d) }))
		}},
		{"slice", 2, func() *Node { return mk(t, "$.slice($, $)", g.expr(t, d), g.smallInt(d), g.smallInt(d)) }},
		{"reverse/distinct", 2, func() *Node {
			return mk(t, "$."+pick(g, []string{"reverse", "distinct"})+"()", g.expr(t, d))
		}},
		{"flatten", 1, func() *Node {
			if g.p(0.3) {
				return mk(t, "$.flatten($)", g.expr(listOf(t), d), g.smallInt(d))
			}
			return mk(t, "$.flatten()", g.expr(listOf(t), d))
		}},
		{"transformList", 2, func() *Node {
			r, kt, vt := g.rangeOver(d, !g.noMaps && e.ordered())
			k, v := pick(g, []string{"i", "k"}), pick(g, []string{"v", "w"})
			n := g.with([]scopeVar{{k, kt}, {v, vt}}, func() *Node {
				if g.p(0.3) {
					return mk(t, "$.transformList("+k+", "+v+", $, $)", r, g.expr(tBool, d), g.expr(e, d))
				}
				return mk(t, "$.transformList("+k+", "+v+", $)", r, g.expr(e, d))
			})
			if r.T.K == KMap {
				n = mk(t, "$.sort()", n)
			}
			return n
		}},
		{"opt-elem", 1, func() *Node { return mk(t, "[$, ?$]", g.expr(e, d), g.expr(optOf(e), d)) }},
		{"unwrapOpt", 1, func() *Node { return mk(t, "$.unwrapOpt()", g.expr(listOf(optOf(e)), d)) }},
	}
	if e.ordered() {
		ps = append(ps,
			prod{"sort", 2, func() *Node { return mk(t, "$.sort()", g.expr(t, d)) }},
			prod{"sortBy", 1, func() *Node {
				v := pick(g, compVars)
				return mk(t, "$.sortBy("+v+", $)", g.expr(t, d), g.with([]scopeVar{{v, e}}, func() *Node { return g.expr(g.orderedType(), d) }))
			}})
	}
	switch e.K {
	case KString:
		ps = append(ps,
			prod{"split", 4, func() *Node {
				if g.p(0.3) {
					return mk(t, "$.split($, $)", g.expr(tString, d), g.expr(tString, d), g.smallInt(d))
				}
				return mk(t, "$.split($)", g.expr(tString, d), g.expr(tString, d))
			}},
			prod{"findAll", 2, func() *Node {
				if g.p(0.3) {
					return mk(t, "$.findAll($, $)", g.expr(tString, d), g.regex(d), g.smallInt(d))
				}
				return mk(t, "$.findAll($)", g.expr(tString, d), g.regex(d))
			}})
	case KInt:
		// small: a long range makes transformMap quadratic on both sides (40960: 9 s)
		ps = append(ps, prod{"lists.range", 2, func() *Node {
			return mk(t, "lists.range($)", leaf(tInt, pick(g, []string{"0", "1", "3", "5", "10", "-1", "100"})))
		}})
	}
	return ps
}

// listLen: 0 to 3 elements, rarely empty (an index into [] is an error)
func (g *Gen) listLen() int {
	if g.p(0.1) {
		return 0
	}
	return 1 + g.n(3)
}

func (g *Gen) listLiteral(t *Type, d, n int) *Node {
	if n == 0 {
		return leaf(t, "[]")
	}
	g.inLit++
	defer func() { g.inLit-- }()
	tmpl := "[" + strings.Repeat("$, ", n-1) + "$]"
	kids := make([]*Node, n)
	for i := range kids {
		kids[i] = g.expr(t.E, d)
	}
	return mk(t, tmpl, kids...)
}

func (g *Gen) mapProds(t *Type, d int) []prod {
	ps := []prod{
		{"map-lit", 6, func() *Node {
			n := g.n(3)
			if n == 0 {
				return leaf(t, "{}")
			}
			g.inLit++
			defer func() { g.inLit-- }()
			var parts []string
			var kids []*Node
			for i := 0; i < n; i++ {
				opt := g.p(0.1)
				kids = append(kids, g.expr(t.E, d))
				if opt {
					kids = append(kids, g.expr(optOf(t.V), d))
					parts = append(parts, "?$: $")
				} else {
					kids = append(kids, g.expr(t.V, d))
					parts = append(parts, "$: $")
				}
			}
			return mk(t, "{"+strings.Join(parts, ", ")+"}", kids...)
		}},
	}
	if t.E.K == KInt {
		ps = append(ps, prod{"transformMap", 2, func() *Node {
			e := g.elemType(1)
			r := g.expr(listOf(e), d)
			return g.with([]scopeVar{{"i", tInt}, {"v", e}}, func() *Node {
				if g.p(0.3) {
					return mk(t, "$.transformMap(i, v, $, $)", r, g.expr(tBool, d), g.expr(t.V, d))
				}
				return mk(t, "$.transformMap(i, v, $)", r, g.expr(t.V, d))
			})
		}})
	}
	ps = append(ps, prod{"transformMapEntry", 1, func() *Node {
		e := g.elemType(1)
		r := g.expr(listOf(e), d)
		return g.with([]scopeVar{{"i", tInt}, {"v", e}}, func() *Node {
			return mk(t, "$.transformMapEntry(i, v, {$: $})", r, g.expr(t.E, d), g.expr(t.V, d))
		})
	}})
	if t.E.K == KString && t.V.K == KList && t.V.E.K == KString {
		ps = append(ps, prod{"url.getQuery", 1, func() *Node { return mk(t, "$.getQuery()", g.expr(tURL, d)) }})
	}
	if t.E.K == KString && (t.V.K == KDyn || t.V.K == KQuantity) {
		ps = append(ps, prod{"device-map", 8, func() *Node {
			if t.V.K == KQuantity {
				return g.capMap()
			}
			return g.attrMap(KDyn)
		}})
	}
	return ps
}

func (g *Gen) optProds(t *Type, d int) []prod {
	e := t.E
	ps := []prod{
		{"optional.of", 4, func() *Node { return mk(t, "optional.of($)", g.expr(e, d)) }},
		{"optional.none", 2, func() *Node { return leaf(t, "optional.none()") }},
		{"ofNonZeroValue", 2, func() *Node { return mk(t, "optional.ofNonZeroValue($)", g.expr(e, d)) }},
		{"list[?i]", 2, func() *Node { return mk(t, "$[?$]", g.expr(listOf(e), d), g.index(d)) }},
		{"map[?k]", 2, func() *Node {
			k := pick(g, []*Type{tString, tInt})
			return mk(t, "$[?$]", g.expr(mapOf(k, e), d), g.expr(k, d))
		}},
		{"opt.or", 2, func() *Node { return mk(t, "$.or($)", g.expr(t, d), g.expr(t, d)) }},
		{"optMap", 1, func() *Node {
			src := g.elemType(1)
			v := pick(g, compVars)
			return mk(t, "$.optMap("+v+", $)", g.expr(optOf(src), d), g.with([]scopeVar{{v, src}}, func() *Node { return g.expr(e, d) }))
		}},
		{"optFlatMap", 1, func() *Node {
			src := g.elemType(1)
			v := pick(g, compVars)
			return mk(t, "$.optFlatMap("+v+", $)", g.expr(optOf(src), d), g.with([]scopeVar{{v, src}}, func() *Node { return g.expr(t, d) }))
		}},
	}
	if e.K == KDyn || e.K == KBool || e.K == KInt || e.K == KString || e.K == KSemver {
		ps = append(ps, prod{"attr?.", 6, func() *Node {
			return mk(t, "$.?"+g.attrName(e.K), g.attrMap(KDyn))
		}})
	}
	return ps
}

// References to the device.

func (g *Gen) domain() string {
	switch x := g.n(20); {
	case x < 13:
		return g.dev.Driver
	case x < 19:
		return pick(g, otherDomains)
	}
	return pick(g, []string{"nvidia.com", "", "GPU.EXAMPLE.COM"})
}

// attrName: a name the device has with that kind of value (mostly), a schema name, or one no
// device has.
func (g *Gen) attrName(k Kind) string {
	_, name := g.attr(k)
	return name
}

// attr: the domain and name of an attribute the device has with that kind of value (mostly;
// then sometimes another domain), else a schema name or one no device has, in any domain.
func (g *Gen) attr(k Kind) (string, string) {
	if g.p(0.9) {
		var keys []string
		for q, a := range g.dev.Attributes {
			if k == KDyn || attrKind(a) == k {
				keys = append(keys, string(q))
			}
		}
		if len(keys) > 0 {
			sortStrings(keys)
			dom, id := splitQualified(pick(g, keys))
			if dom == "" {
				dom = g.dev.Driver
			}
			if g.p(0.05) {
				dom = g.domain()
			}
			return dom, id
		}
	}
	if g.p(0.9) {
		var names []string
		for _, s := range schema {
			if k == KDyn || s.k == k {
				names = append(names, s.name)
			}
		}
		return g.domain(), pick(g, names)
	}
	return g.domain(), pick(g, []string{"missing", "Model", "broken", "cores_"})
}

func splitQualified(q string) (string, string) {
	if i := strings.Index(q, "/"); i >= 0 {
		return q[:i], q[i+1:]
	}
	return "", q
}

func attrKind(a resourceapi.DeviceAttribute) Kind {
	switch {
	case a.IntValue != nil:
		return KInt
	case a.BoolValue != nil:
		return KBool
	case a.StringValue != nil:
		return KString
	case a.VersionValue != nil:
		return KSemver
	}
	return KNull
}

func (g *Gen) attrMap(Kind) *Node {
	return leaf(mapOf(tString, tDyn), `device.attributes[`+quoteCEL(g.domain())+`]`)
}

func (g *Gen) capMap() *Node {
	return leaf(mapOf(tString, tQuantity), `device.capacity[`+quoteCEL(g.domain())+`]`)
}

// attrRef reads an attribute meant to have kind k (the static type is dyn).
func (g *Gen) attrRef(k Kind) *Node {
	if g.inLit > 0 && g.p(0.92) {
		switch k {
		case KBool:
			return leaf(tBool, pick(g, []string{"true", "false"}))
		case KInt:
			return g.intLit()
		case KString:
			return leaf(tString, g.stringLit())
		}
		return mk(tSemver, "semver($)", g.semverString(99))
	}
	rawDom, name := g.attr(k)
	dom := quoteCEL(rawDom)
	t := &Type{K: k}
	if k == KSemver {
		t = tSemver
	}
	base := "device.attributes[" + dom + "]"
	switch x := g.n(20); {
	case x < 10:
		return leaf(t, base+"."+name)
	case x < 12:
		return leaf(t, base+"["+quoteCEL(name)+"]")
	case x < 18:
		return mk(t, base+".?"+name+".orValue($)", g.leaf(t))
	default:
		v := pick(g, bindVars)
		return leaf(t, "cel.bind("+v+", "+base+", "+v+"."+name+")")
	}
}

func (g *Gen) capRef() *Node {
	var names []string
	for q := range g.dev.Capacity {
		_, id := splitQualified(string(q))
		names = append(names, id)
	}
	sortStrings(names)
	name := pick(g, capNames)
	dom := g.domain()
	if len(names) > 0 && g.p(0.85) {
		name = pick(g, names)
		for q := range g.dev.Capacity {
			qd, id := splitQualified(string(q))
			if id == name && g.p(0.9) {
				dom = qd
				if dom == "" {
					dom = g.dev.Driver
				}
			}
		}
	}
	base := "device.capacity[" + quoteCEL(dom) + "]"
	if g.p(0.15) {
		return mk(tQuantity, base+".?"+name+".orValue($)", mk(tQuantity, "quantity($)", g.quantityString(0)))
	}
	return leaf(tQuantity, base+"."+name)
}

// Leaves.

func (g *Gen) leaf(t *Type) *Node {
	// a variable in scope of that type, sometimes
	if len(g.scope) > 0 && g.p(0.45) {
		var vs []string
		for _, v := range g.scope {
			if v.t.Eq(t) {
				vs = append(vs, v.name)
			}
		}
		if len(vs) > 0 {
			return leaf(t, pick(g, vs))
		}
	}
	if g.p(0.002) {
		g.used["undeclared"] = true
		return leaf(t, pick(g, []string{"x", "foo", "device.attribute", "devices", "v"}))
	}
	switch t.K {
	case KBool:
		if g.p(0.15) {
			return g.attrRef(KBool)
		}
		return leaf(t, pick(g, []string{"true", "false"}))
	case KInt:
		if g.p(0.2) {
			return g.attrRef(KInt)
		}
		return g.intLit()
	case KUint:
		return leaf(t, g.uintLit())
	case KDouble:
		return leaf(t, g.doubleLit())
	case KString:
		if g.p(0.15) {
			return g.attrRef(KString)
		}
		if g.p(0.05) {
			return leaf(t, "device.driver")
		}
		return leaf(t, g.stringLit())
	case KBytes:
		return leaf(t, pick(g, bytesLits))
	case KNull:
		return leaf(t, "null")
	case KList:
		return g.listLiteral(t, 99, g.listLen())
	case KMap:
		if t.E.K == KString && t.V.K == KDyn && g.p(0.5) {
			return g.attrMap(KDyn)
		}
		if t.E.K == KString && t.V.K == KQuantity && g.p(0.7) {
			return g.capMap()
		}
		if g.p(0.3) {
			return leaf(t, "{}")
		}
		return mk(t, "{$: $}", g.leaf(t.E), g.leaf(t.V))
	case KQuantity:
		if g.p(0.4) {
			return g.capRef()
		}
		return mk(t, "quantity($)", g.quantityString(99))
	case KSemver:
		if g.p(0.4) {
			return g.attrRef(KSemver)
		}
		return mk(t, "semver($)", g.semverString(99))
	case KIP:
		return mk(t, "ip($)", g.stringFrom(ipStrings, 99))
	case KCIDR:
		return mk(t, "cidr($)", g.stringFrom(cidrStrings, 99))
	case KURL:
		return mk(t, "url($)", g.stringFrom(urlStrings, 99))
	case KOpt:
		if g.p(0.2) {
			return leaf(t, "optional.none()")
		}
		return mk(t, "optional.of($)", g.leaf(t.E))
	case KDuration:
		return mk(t, "duration($)", g.stringFrom(durationStrings, 99))
	case KTimestamp:
		return mk(t, "timestamp($)", g.stringFrom(timestampStrings, 99))
	case KType:
		return g.typeName()
	}
	// dyn
	if g.inLit == 0 && g.p(0.6) {
		return g.attrRef(pick(g, []Kind{KBool, KInt, KString, KSemver}))
	}
	return mk(t, "dyn($)", g.leaf(pick(g, []*Type{tInt, tString, tBool, tDouble})))
}

func (g *Gen) typeName() *Node {
	return leaf(tType, pick(g, []string{"int", "uint", "double", "bool", "string", "bytes", "list",
		"map", "null_type", "type", "google.protobuf.Timestamp", "google.protobuf.Duration"}))
}

func (g *Gen) smallInt(d int) *Node {
	if d < g.maxDeep && g.p(0.15) {
		return g.expr(tInt, d)
	}
	if g.p(0.9) {
		return leaf(tInt, fmt.Sprint(g.n(6)-1))
	}
	return g.intLit()
}

// index: mostly 0 or 1 (lists are short)
func (g *Gen) index(d int) *Node {
	if g.p(0.75) {
		return leaf(tInt, pick(g, []string{"0", "0", "1"}))
	}
	return g.smallInt(d)
}

func (g *Gen) intLit() *Node {
	if g.p(0.85) {
		return leaf(tInt, pick(g, []string{"0", "1", "2", "3", "4", "5", "7", "8", "10", "16", "42",
			"100", "1024", "-1", "-2", "-7", "81920", "40960"}))
	}
	return leaf(tInt, pick(g, []string{"9223372036854775807", "-9223372036854775808",
		"0x7fffffffffffffff", "-0x8000000000000000", "0xFF", "0x0", "4294967296", "-4294967296",
		"9223372036854775808", "-9223372036854775809", "3037000500", "-3037000500", "07",
		"0x", "1_000"}))
}

func (g *Gen) uintLit() string {
	if g.p(0.8) {
		return pick(g, []string{"0u", "1u", "2u", "3u", "7u", "42u", "100u", "1024U"})
	}
	return pick(g, []string{"18446744073709551615u", "0xFFFFFFFFFFFFFFFFu", "9223372036854775808u",
		"18446744073709551616u", "4294967296u", "0x10u", "-1u"})
}

func (g *Gen) doubleLit() string {
	if g.p(0.8) {
		return pick(g, []string{"0.0", "1.0", "-1.5", "2.5", "0.5", "1e3", "1.5e-3", "3.14159", "100.0",
			"1e9", "-0.0", ".5", "2.0"})
	}
	return pick(g, []string{"1e308", "1.7976931348623157e308", "5e-324", "1e400", "-1e308",
		"2.2250738585072014e-308", "9007199254740993.0", "1e-400", "1.", "0e0", "1E+2"})
}

func (g *Gen) stringLit() string {
	if g.p(0.012) {
		g.used["bad-escape"] = true
		return pick(g, []string{`"\q"`, `"\uD800"`, `"\U00110000"`, `"\x4"`, `"\u12"`, `"abc`,
			`'\400'`, `"\ud83d\ude00"`, `"a` + "\n" + `b"`, `b"\u00e9"`})
	}
	return pick(g, stringLits)
}

var stringLits = []string{`""`, `"a"`, `"abc"`, `"Tesla-M40"`, `"tesla"`, `"A100"`, `"a100"`,
	`"gpu.example.com"`, `"dra.example.com"`, `"é"`, `"日本"`, `"😀"`, `"\u00e9"`, `"\U0001F600"`,
	`"\x41"`, `"\101"`, `'single'`, `"a\tb\n"`, `r"\d+"`, `R'raw\n'`, `"""triple "q" """`,
	`'''multi` + "\n" + `line'''`, `"\""`, `" padded "`, `"1.5Gi"`, `"100m"`, `"1.2.3"`,
	`"10.0.0.1"`, `"%s"`, `"true"`, `"-42"`, `"9223372036854775808"`, `"0x10"`, `"1e3"`, `"NaN"`,
	`"-"`, `","`, `"a,b,,c"`, `"AbC"`, `"\\"`, `"\a\b\f\v\r"`, `"cores"`, `"model"`, `"memory"`,
	`"Ünïcödé"`, `"ß"`, `"İ"`, `"\u0000"`, `"x.y"`, `"  "`, `"42"`, `"3.5"`, `"inf"`, `"-Infinity"`}

var bytesLits = []string{`b""`, `b"abc"`, `b"\xff\x00"`, `b'\377'`, `b"é"`, `B"\u00e9"`, `b"\x41"`,
	`br"\x"`, `b"""x"""`}

// stringFrom: a literal from the pool (mostly), or any string expression.
func (g *Gen) stringFrom(pool []string, d int) *Node {
	if d < g.maxDeep && g.p(0.12) {
		return g.expr(tString, d)
	}
	return leaf(tString, pick(g, pool))
}

func (g *Gen) quantityString(d int) *Node {
	if g.p(0.8) {
		return leaf(tString, quoteCEL(pick(g, quantities)))
	}
	return g.stringFrom([]string{`"1.5Gi"`, `"100m"`, `"1e3"`, `"0.1"`, `"1e1000"`, `"1Gb"`, `""`,
		`"1.5.5"`, `"abc"`, `"1e-1000"`, `"99999999999999999999999999999999999999"`, `"1 Gi"`,
		`"-0"`, `".5"`, `"5."`, `"1e+3"`, `"0x10"`, `"1Mi "`, `"2.5e3Ki"`, `"1m"`, `"1u"`}, d)
}

func (g *Gen) semverString(d int) *Node {
	if g.p(0.7) {
		return leaf(tString, quoteCEL(pick(g, attrVersions)))
	}
	return g.stringFrom([]string{`"1.2"`, `"v1.2.3"`, `"01.2.3"`, `"1.2.3-01"`, `""`, `"1.2.3.4"`,
		`"1"`, `"v1"`, `"1.2.3-"`, `"1.2.3+"`, `"99999999999999999999.0.0"`, `" 1.2.3"`,
		`"1.2.3-rc.1+build"`, `"1.02.3"`, `"V1.2.3"`}, d)
}

func (g *Gen) regex(d int) *Node {
	if g.p(0.1) {
		return g.expr(tString, d)
	}
	return leaf(tString, pick(g, []string{`"^a"`, `"[0-9]+"`, `"(?i)tesla"`, `"a|b"`, `""`, `".*"`,
		`"\\d{2,}"`, `"("`, `"["`, `"a{1001}"`, `"(?P<n>x)"`, `"\\pL"`, `"[[:alpha:]]+"`, `"^$"`,
		`"x*?"`, `"é"`, `"\\b"`, `"^[A-Z]\\d+$"`, `"(a)(b)?"`, `"\\"`, `"(?=x)"`, `"\\x{1F600}"`,
		`"."`, `"[^-]+"`, `"^gpu\\.example\\.com$"`, `r"M(\d+)"`}))
}

var (
	ipStrings = []string{`"10.0.0.1"`, `"::1"`, `"127.0.0.1"`, `"0.0.0.0"`, `"::"`, `"fe80::1"`,
		`"ff02::1"`, `"192.168.1.300"`, `"::ffff:1.2.3.4"`, `"2001:db8::1"`, `"1.2.3"`, `""`,
		`"010.0.0.1"`, `"224.0.0.1"`, `"169.254.1.1"`, `"2001:DB8::1"`, `"fe80::1%eth0"`, `"8.8.8.8"`}
	cidrStrings = []string{`"10.0.0.0/8"`, `"10.1.2.3/8"`, `"::1/128"`, `"2001:db8::/32"`,
		`"1.2.3.4/33"`, `"10.0.0.0"`, `"fe80::/10"`, `"0.0.0.0/0"`, `"192.168.0.0/16"`, `"::/0"`,
		`"10.0.0.0/08"`, `""`}
	urlStrings = []string{`"https://example.com"`, `"https://user:pw@example.com:8080/a/b?c=d#f"`,
		`"http://[::1]:80/"`, `"/relative"`, `"example.com"`, `""`, `"https://example.com/%zz"`,
		`"ftp://x"`, `"https://example.com/a%20b"`, `"http://127.0.0.1:65536/"`, `"HTTPS://EXAMPLE.COM"`}
	durationStrings = []string{`"1h"`, `"30m"`, `"1.5s"`, `"-1s"`, `"0"`, `"1d"`, `"100ns"`,
		`"1h30m"`, `"9999999999h"`, `"1us"`, `"1µs"`, `""`, `"-0.5h"`, `"315576000001s"`}
	timestampStrings = []string{`"2024-01-01T00:00:00Z"`, `"1970-01-01T00:00:00Z"`,
		`"0001-01-01T00:00:00Z"`, `"9999-12-31T23:59:59Z"`, `"2024-02-30T00:00:00Z"`,
		`"2024-01-01T00:00:00+05:00"`, `"bad"`, `"2024-06-15T12:30:45.123456789Z"`}
	tzStrings     = []string{`"UTC"`, `"America/New_York"`, `"+05:30"`, `"-08:00"`, `"bad/zone"`, `""`, `"Asia/Kolkata"`}
	boolStrings   = []string{`"true"`, `"false"`, `"TRUE"`, `"t"`, `"f"`, `"1"`, `"0"`, `"yes"`, `""`, `"True"`}
	formatStrings = []string{`"%s"`, `"%d"`, `"%f"`, `"%.2f"`, `"%e"`, `"%b"`, `"%o"`, `"%x"`, `"%X"`,
		`"%s-%s"`, `"%%"`, `"%"`, `"%q"`, `"%.3e"`, `"id=%d"`, `"%s %s %s"`, `"%.0f"`, `"%10s"`}
)

// quoteCEL writes s as a CEL double-quoted string literal.
func quoteCEL(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// nameString: a string literal naming an attribute, for `in`.
func (g *Gen) nameString() *Node { return leaf(tString, quoteCEL(g.attrName(KDyn))) }
