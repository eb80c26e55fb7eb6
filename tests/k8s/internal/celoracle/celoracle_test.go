package celoracle

import (
	"encoding/json"
	"strings"
	"testing"
)

func answer(t *testing.T, line string) Response {
	t.Helper()
	return Oracle{}.AnswerLine([]byte(line))
}

// What the real library answers on the points the C side must get right (facts the
// contract states; a change of the pinned library that moves one of them shows here).
func TestOracleKnownAnswers(t *testing.T) {
	dev := `"device":{"driver":"gpu.example.com","attributes":{"model":{"string":"A100"},"v":{"version":"1.2.3"}},"capacity":{"memory":{"value":"1.5Gi"}}}`
	cases := []struct{ line, result, errPrefix string }{
		{`{"id":1,"expr":"device.attributes[\"gpu.example.com\"].model == \"A100\"",` + dev + `}`, True, ""},
		{`{"id":2,"expr":"device.attributes[\"gpu.example.com\"].cores > 1",` + dev + `}`, RuntimeError, "no such key: cores"},
		{`{"id":3,"expr":"device.attributes[\"other\"].model == \"A100\"",` + dev + `}`, RuntimeError, "no such key: model"},
		// the capacity went through the API server: 1536Mi, an int64 amount
		{`{"id":4,"expr":"device.capacity[\"gpu.example.com\"].memory.asInteger() == 1610612736",` + dev + `}`, True, ""},
		{`{"id":5,"expr":"quantity(\"1.5Gi\").asInteger() > 0"}`, RuntimeError, "cannot convert value to integer"},
		{`{"id":6,"expr":"[1].includes(1)"}`, True, ""},
		{`{"id":7,"expr":"[1].includes(1)","env":"new"}`, CompileError, "compilation failed: ERROR: <input>:1:13: undeclared reference to 'includes'"},
		{`{"id":8,"expr":"dyn(true)"}`, True, ""},
		{`{"id":9,"expr":"dyn(true)","env":"new"}`, CompileError, "must evaluate to bool or the unknown type, not dyn"},
		{`{"id":10,"expr":"1 + 1"}`, CompileError, "must evaluate to bool or the unknown type, not int"},
		{`{"id":11,"expr":"device.attributes[\"a\"].v.major() == 1","device":{"driver":"a","attributes":{"v":{"version":"1.2"}}}}`, RuntimeError, "attribute v: parse semantic version: "},
		{`{"id":12,"expr":"true","device":{"driver":"a","attributes":{"x":{}}}}`, RuntimeError, "attribute x: unsupported attribute value"},
		{`{"id":13,"expr":"` + strings.Repeat("true && ", 1300) + `true","env":"new"}`, CompileError, "Too long: may not be more than 10240 bytes"},
		{`{"id":14,"expr":"device.attributes.all(d, device.attributes[d].all(n, string(device.attributes[d][n]).split(\"\").all(s, s.split(\"\").size() > 0)))","env":"new"}`, CompileError, "Forbidden: too complex, exceeds cost limit"},
		{`{"id":15,"expr":"[1, 2, 3].all(x, x > 0)","costLimit":2}`, RuntimeError, "operation cancelled: actual cost limit exceeded"},
		{`{"id":16,"expr":"[?dyn(optional.of(1))].size() == 1"}`, GoPanic, "panic: "},
		{`{"id":17,"expr":"x +"}`, CompileError, "compilation failed: ERROR: <input>:1:4: Syntax error: "},
		{`{"id":18}`, ToolError, "bad request"},
	}
	for _, c := range cases {
		r := answer(t, c.line)
		if r.Result != c.result || !strings.HasPrefix(r.Error, c.errPrefix) {
			t.Errorf("%s\n  got %s %q, want %s %q...", c.line[:min(len(c.line), 120)], r.Result, r.Error, c.result, c.errPrefix)
		}
	}
	r := answer(t, `{"id":"m","expr":"device.driver == \"a\"","devices":[{"driver":"a"},{"driver":"b"}]}`)
	if len(r.Results) != 2 || r.Results[0].Result != True || r.Results[1].Result != False || string(r.ID) != `"m"` {
		t.Errorf("devices: %+v", r)
	}
	r = answer(t, `{"id":"c","expr":"x","devices":[{"driver":"a"}]}`)
	if r.Result != CompileError || r.Results != nil {
		t.Errorf("devices with a compile error: %+v", r)
	}
}

// The generator is reproducible, most of its cases compile and give true or false, and
// every production that is meant to be well-typed compiles at least sometimes (a misspelt
// function would only ever give compile errors and test nothing).
func TestGenerator(t *testing.T) {
	const n = 4000
	mix := map[string]int{}
	used, compiled := map[string]int{}, map[string]int{}
	for i := 0; i < n; i++ {
		c := NewCase(3, i)
		again := NewCase(3, i)
		if string(Marshal(&c.Req)) != string(Marshal(&again.Req)) {
			t.Fatalf("case %d differs between two runs", i)
		}
		r := Oracle{}.Answer(&c.Req)
		mix[r.Result]++
		for _, u := range c.Used {
			used[u]++
			if r.Result != CompileError {
				compiled[u]++
			}
		}
	}
	if ok := mix[True] + mix[False]; ok < n/2 {
		t.Errorf("only %d of %d cases are true/false: %v", ok, n, mix)
	}
	if mix[CompileError] > n/5 {
		t.Errorf("%d of %d cases do not compile: %v", mix[CompileError], n, mix)
	}
	broken := map[string]bool{"ill-typed": true, "syntax-mangle": true, "undeclared": true, "bad-escape": true}
	for u, k := range used {
		if !broken[u] && k >= 20 && compiled[u] == 0 {
			t.Errorf("production %q: used in %d cases, none compiled", u, k)
		}
	}
	if len(used) < 100 {
		t.Errorf("only %d productions used", len(used))
	}
}

func TestCompare(t *testing.T) {
	syn := "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input\n | x +\n | ...^"
	synOther := "compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input\n | x +\n | ...^\nERROR: more"
	cases := []struct {
		g, c Result
		want Verdict
	}{
		{Result{True, ""}, Result{True, ""}, Same},
		{Result{True, ""}, Result{False, ""}, Differ},
		{Result{RuntimeError, "no such key: a"}, Result{RuntimeError, "no such key: b"}, Differ},
		{Result{CompileError, syn}, Result{CompileError, synOther}, Soft},
		{Result{CompileError, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' (in container '')"},
			Result{CompileError, "compilation failed: ERROR: <input>:1:1: undeclared reference to 'x'"}, Differ},
	}
	for _, c := range cases {
		if v := CompareResult(c.g, c.c); v != c.want {
			t.Errorf("%+v vs %+v: %v, want %v", c.g, c.c, v, c.want)
		}
	}
	other := Result{CompileError, "compilation failed: ERROR: <input>:1:4: Syntax error: missing ')' at '<EOF>'\n | x +"}
	moved := Result{CompileError, "compilation failed: ERROR: <input>:1:5: Syntax error: missing ')' at '<EOF>'"}
	if CompareResult(Result{CompileError, syn}, other) != Differ {
		t.Error("syntax errors: another first line is a difference")
	}
	SyntaxPositionOnly = true
	if CompareResult(Result{CompileError, syn}, other) != Soft || CompareResult(Result{CompileError, syn}, moved) != Differ {
		t.Error("--syntax-errors=position: the same position is soft, another one a difference")
	}
	SyntaxPositionOnly = false
	g := Response{Result: RuntimeError, Error: "no such key: cores"}
	c := Response{Result: False}
	if cl := ClassOf(g, c); cl != "go runtime-error, c false; go: no such key" {
		t.Errorf("class %q", cl)
	}
}

func TestConformanceValues(t *testing.T) {
	for _, enc := range []string{`{"int":"-9223372036854775808"}`, `{"uint":"18446744073709551615"}`,
		`{"double":1.5}`, `{"double":"NaN"}`, `{"double":"-0"}`, `{"bool":true}`, `{"string":"é😀"}`,
		`{"bytes":"/wA="}`, `{"null":null}`, `{"list":[{"int":"1"},{"string":"a"}]}`,
		`{"map":[[{"string":"a"},{"int":"1"}]]}`, `{"duration":"1.500s"}`, `{"timestamp":"2009-02-13T23:31:30Z"}`} {
		v, err := DecodeValue(json.RawMessage(enc))
		if err != nil {
			t.Errorf("%s: %v", enc, err)
			continue
		}
		if got := EncodeValue(v); !EqualValues(got, json.RawMessage(enc)) {
			t.Errorf("%s came back as %s", enc, got)
		}
	}
	if !EqualValues(json.RawMessage(`{"map":[[{"int":"1"},{"bool":true}],[{"int":"2"},{"bool":false}]]}`),
		json.RawMessage(`{"map":[[{"int":"2"},{"bool":false}],[{"int":"1"},{"bool":true}]]}`)) {
		t.Error("maps compare as sets")
	}
	r := AnswerConformance(&ConfRequest{ID: "x", Expr: "x + 1", Decls: map[string]string{"x": "int"},
		Bindings: map[string]json.RawMessage{"x": json.RawMessage(`{"int":"41"}`)}})
	if r.Result != ValueResult || !EqualValues(r.Value, json.RawMessage(`{"int":"42"}`)) {
		t.Errorf("x + 1: %+v", r)
	}
}
