package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/big"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Objects lists the case's objects in the order they are written: PriorityClasses,
// RuntimeClasses, Nodes, the other objects, bound pods, pending pods.
func (c *Case) Objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range c.PriorityClasses {
		out = append(out, o)
	}
	for _, o := range c.RuntimeClasses {
		out = append(out, o)
	}
	for _, o := range c.Nodes {
		out = append(out, o)
	}
	out = append(out, c.Others...)
	for _, o := range c.Pods {
		out = append(out, o)
	}
	return out
}

// YAML writes the case as multi-document YAML. Empty fields are left out, and every
// resource quantity is written in one of its equivalent forms ("0.5Gi", "512Mi",
// "536870912", "1000m", ...), chosen from the case's seed and the field's place, so the same
// case always reads the same and a shrunk case keeps the forms of what remains.
func (c *Case) YAML() ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range c.Objects() {
		m, err := toMap(o)
		if err != nil {
			return nil, err
		}
		if st, ok := m["status"].(map[string]any); ok {
			// zero values a typed Node carries: nothing a kubelet would have written
			for _, k := range []string{"nodeInfo", "daemonEndpoints"} {
				if allZero(st[k]) {
					delete(st, k)
				}
			}
		}
		prune(m)
		name := fmt.Sprint(m["kind"], "/", nested(m, "metadata", "name"))
		if !c.CanonicalQuantities {
			rewriteQuantities(m, fmt.Sprint(c.Seed, name), "")
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func toMap(o runtime.Object) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}

func nested(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// prune drops nulls, empty maps and empty lists held by map keys (not list elements: an
// empty node selector term means something).
func prune(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, e := range x {
			if prune(e) {
				delete(x, k)
			}
		}
		return len(x) == 0
	case []any:
		for _, e := range x {
			prune(e)
		}
		return len(x) == 0
	}
	return false
}

var quantityKeys = map[string]bool{"requests": true, "limits": true, "allocatable": true, "capacity": true, "podFixed": true, "overhead": true}

func rewriteQuantities(v any, seed, path string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := x[k]
			if rl, ok := e.(map[string]any); ok && quantityKeys[k] {
				for rk, rv := range rl {
					if s, ok := rv.(string); ok {
						rl[rk] = QuantityForm(s, seed+path+"."+k+"."+rk)
					}
				}
				continue
			}
			rewriteQuantities(e, seed, path+"."+k)
		}
	case []any:
		for i, e := range x {
			rewriteQuantities(e, seed, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// QuantityForm returns one of the spellings of the quantity q (which parses to the same
// value), picked by hashing where.
func QuantityForm(q, where string) string {
	v, err := resource.ParseQuantity(q)
	if err != nil {
		return q
	}
	forms := quantityForms(v)
	h := fnv.New64a()
	h.Write([]byte(where))
	return forms[h.Sum64()%uint64(len(forms))]
}

func quantityForms(v resource.Quantity) []string {
	forms := []string{v.String()}
	try := func(s string) {
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Cmp(v) != 0 {
			return
		}
		for _, f := range forms {
			if f == s {
				return
			}
		}
		forms = append(forms, s)
	}
	milli := v.MilliValue()
	if milli < 1e15 {
		try(fmt.Sprintf("%dm", milli))
		if milli%1000 == 0 {
			n := milli / 1000
			try(fmt.Sprint(n))
			for _, s := range []struct {
				suf string
				mul int64
			}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}} {
				if n != 0 && n%s.mul == 0 {
					try(fmt.Sprintf("%d%s", n/s.mul, s.suf))
				}
				if n != 0 && (2*n)%s.mul == 0 && n%s.mul != 0 {
					try(decimalHalf(2*n/s.mul) + s.suf)
				}
			}
			for _, e := range []int64{3, 6, 9} {
				d := new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil).Int64()
				if n != 0 && n%d == 0 {
					try(fmt.Sprintf("%de%d", n/d, e))
				}
			}
		} else {
			try(strings.TrimRight(fmt.Sprintf("%d.%03d", milli/1000, milli%1000), "0"))
		}
	}
	return forms
}

// decimalHalf writes twice-n / 2 as a decimal: 1 -> "0.5", 3 -> "1.5".
func decimalHalf(twice int64) string {
	if twice%2 == 0 {
		return fmt.Sprint(twice / 2)
	}
	return fmt.Sprintf("%d.5", twice/2)
}

func allZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !allZero(e) {
				return false
			}
		}
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	}
	return false
}
