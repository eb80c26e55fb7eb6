package celoracle

// cel-spec's conformance tests (tests/simple/testdata/*.textproto, the copy in cel.dev/expr)
// as JSON lines for cel-eval --conformance: each test's expression with its declared variables
// and bindings, and as the expected answer what cel-go says in the DRA environment kube-scheduler
// compiles selectors in (the stored one), plus the declared variables. Tests that need what
// that environment cannot have (protobuf messages, a container, macros off, no type check,
// function declarations) are skipped with the reason. The value encoding is in
// docs/cel-testing.md.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	exprpb "cel.dev/expr"
	conftest "cel.dev/expr/conformance/test"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	// the test messages, so that files mentioning them parse (their tests are skipped)
	_ "cel.dev/expr/conformance/proto2"
	_ "cel.dev/expr/conformance/proto3"

	resourceapi "k8s.io/api/resource/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// ConfRequest is one conformance line.
type ConfRequest struct {
	ID       string                     `json:"id"`
	Expr     string                     `json:"expr"`
	Env      string                     `json:"env,omitempty"`
	Decls    map[string]string          `json:"decls,omitempty"`
	Bindings map[string]json.RawMessage `json:"bindings,omitempty"`
	// written by the converter: the answer cel-go gives, and whether cel-spec's expected
	// result agrees with it ("agrees", "differs", or "n/a" when cel-spec's is not comparable)
	Expect *ConfResponse `json:"expect,omitempty"`
	// more answers cel-go gave over repeated runs (a map's iteration order shows)
	ExpectAlso []ConfResponse `json:"expectAlso,omitempty"`
	Spec       string         `json:"spec,omitempty"`
}

// ConfResponse is one conformance answer.
type ConfResponse struct {
	ID     string          `json:"id"`
	Result string          `json:"result"`
	Value  json.RawMessage `json:"value,omitempty"`
	Error  string          `json:"error,omitempty"`
}

const ValueResult = "value"

// confEnv: the stored DRA environment (the one a selector is compiled in).
func confEnv() (*cel.Env, error) {
	res := dracel.GetCompiler(Features).CompileCELExpression("true", dracel.Options{DisableCostEstimation: true})
	if res.Error != nil {
		return nil, res.Error
	}
	return res.Environment, nil
}

// AnswerConformanceLine answers one --conformance line.
func AnswerConformanceLine(line []byte) []byte {
	var req ConfRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return Marshal(ConfResponse{Result: ToolError, Error: "bad request: " + err.Error()})
	}
	return Marshal(AnswerConformance(&req))
}

// AnswerConformance compiles and evaluates with the real library.
func AnswerConformance(req *ConfRequest) (resp ConfResponse) {
	resp.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			resp = ConfResponse{ID: req.ID, Result: GoPanic, Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	env, err := confEnv()
	if err != nil {
		return ConfResponse{ID: req.ID, Result: ToolError, Error: err.Error()}
	}
	var opts []cel.EnvOption
	for _, name := range sortedKeys(req.Decls) {
		t, err := ParseTypeName(req.Decls[name])
		if err != nil {
			return ConfResponse{ID: req.ID, Result: ToolError, Error: fmt.Sprintf("decl %s: %v", name, err)}
		}
		opts = append(opts, cel.Variable(name, t))
	}
	if len(opts) > 0 {
		if env, err = env.Extend(opts...); err != nil {
			return ConfResponse{ID: req.ID, Result: ToolError, Error: "declarations: " + err.Error()}
		}
	}
	ast, iss := env.Compile(req.Expr)
	if iss != nil && iss.Err() != nil {
		return ConfResponse{ID: req.ID, Result: CompileError, Error: "compilation failed: " + iss.String()}
	}
	prg, err := env.Program(ast, cel.CostLimit(resourceapi.CELSelectorExpressionMaxCost),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return ConfResponse{ID: req.ID, Result: CompileError, Error: "program instantiation failed: " + err.Error()}
	}
	vars := map[string]any{}
	for _, name := range sortedKeys(req.Bindings) {
		v, err := DecodeValue(req.Bindings[name])
		if err != nil {
			return ConfResponse{ID: req.ID, Result: ToolError, Error: fmt.Sprintf("binding %s: %v", name, err)}
		}
		vars[name] = v
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return ConfResponse{ID: req.ID, Result: RuntimeError, Error: err.Error()}
	}
	return ConfResponse{ID: req.ID, Result: ValueResult, Value: EncodeValue(out)}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseTypeName reads a type in the decls syntax: int uint double bool string bytes
// null_type dyn timestamp duration type list(T) map(K,V).
func ParseTypeName(s string) (*cel.Type, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "int":
		return cel.IntType, nil
	case "uint":
		return cel.UintType, nil
	case "double":
		return cel.DoubleType, nil
	case "bool":
		return cel.BoolType, nil
	case "string":
		return cel.StringType, nil
	case "bytes":
		return cel.BytesType, nil
	case "null_type":
		return cel.NullType, nil
	case "dyn":
		return cel.DynType, nil
	case "timestamp":
		return cel.TimestampType, nil
	case "duration":
		return cel.DurationType, nil
	case "type":
		return cel.TypeType, nil
	}
	if strings.HasPrefix(s, "list(") && strings.HasSuffix(s, ")") {
		e, err := ParseTypeName(s[5 : len(s)-1])
		if err != nil {
			return nil, err
		}
		return cel.ListType(e), nil
	}
	if strings.HasPrefix(s, "map(") && strings.HasSuffix(s, ")") {
		inner := s[4 : len(s)-1]
		depth := 0
		for i, r := range inner {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 0 {
					k, err := ParseTypeName(inner[:i])
					if err != nil {
						return nil, err
					}
					v, err := ParseTypeName(inner[i+1:])
					if err != nil {
						return nil, err
					}
					return cel.MapType(k, v), nil
				}
			}
		}
	}
	return nil, fmt.Errorf("unknown type %q", s)
}

// EncodeValue writes a CEL value in the conformance encoding.
func EncodeValue(v ref.Val) json.RawMessage {
	b, _ := json.Marshal(encodeValue(v))
	return b
}

func encodeValue(v ref.Val) any {
	switch x := v.(type) {
	case types.Int:
		return map[string]any{"int": strconv.FormatInt(int64(x), 10)}
	case types.Uint:
		return map[string]any{"uint": strconv.FormatUint(uint64(x), 10)}
	case types.Double:
		return map[string]any{"double": encodeDouble(float64(x))}
	case types.Bool:
		return map[string]any{"bool": bool(x)}
	case types.String:
		return map[string]any{"string": string(x)}
	case types.Bytes:
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString([]byte(x))}
	case types.Null:
		return map[string]any{"null": nil}
	case types.Duration:
		return map[string]any{"duration": encodeDuration(x.Duration)}
	case types.Timestamp:
		return map[string]any{"timestamp": x.Time.UTC().Format(time.RFC3339Nano)}
	case *types.Type:
		return map[string]any{"type": x.TypeName()}
	case *types.Optional:
		if !x.HasValue() {
			return map[string]any{"optional": nil}
		}
		return map[string]any{"optional": encodeValue(x.GetValue())}
	}
	switch x := v.(type) {
	case traits.Lister:
		var items []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			items = append(items, encodeValue(it.Next()))
		}
		if items == nil {
			items = []any{}
		}
		return map[string]any{"list": items}
	case traits.Mapper:
		var pairs [][2]any
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			pairs = append(pairs, [2]any{encodeValue(k), encodeValue(x.Get(k))})
		}
		if pairs == nil {
			pairs = [][2]any{}
		}
		return map[string]any{"map": pairs}
	}
	return map[string]any{"opaque": v.Type().TypeName()}
}

func encodeDouble(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0 && math.Signbit(f):
		return "-0"
	}
	return f
}

// encodeDuration as protobuf JSON: seconds with 0, 3, 6 or 9 decimals, "s".
func encodeDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	sec, nanos := int64(d/time.Second), int64(d%time.Second)
	switch {
	case nanos == 0:
		return fmt.Sprintf("%s%ds", sign, sec)
	case nanos%1e6 == 0:
		return fmt.Sprintf("%s%d.%03ds", sign, sec, nanos/1e6)
	case nanos%1e3 == 0:
		return fmt.Sprintf("%s%d.%06ds", sign, sec, nanos/1e3)
	}
	return fmt.Sprintf("%s%d.%09ds", sign, sec, nanos)
}

// DecodeValue reads the conformance encoding into a CEL value.
func DecodeValue(raw json.RawMessage) (ref.Val, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return nil, fmt.Errorf("a value is an object with one key: %s", raw)
	}
	for k, v := range m {
		var s string
		switch k {
		case "int":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(s, 10, 64)
			return types.Int(n), err
		case "uint":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			n, err := strconv.ParseUint(s, 10, 64)
			return types.Uint(n), err
		case "double":
			var f float64
			if json.Unmarshal(v, &f) == nil {
				return types.Double(f), nil
			}
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			switch s {
			case "NaN":
				return types.Double(math.NaN()), nil
			case "Infinity":
				return types.Double(math.Inf(1)), nil
			case "-Infinity":
				return types.Double(math.Inf(-1)), nil
			case "-0":
				return types.Double(math.Copysign(0, -1)), nil
			}
			return nil, fmt.Errorf("bad double %q", s)
		case "bool":
			var b bool
			err := json.Unmarshal(v, &b)
			return types.Bool(b), err
		case "string":
			err := json.Unmarshal(v, &s)
			return types.String(s), err
		case "bytes":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			b, err := base64.StdEncoding.DecodeString(s)
			return types.Bytes(b), err
		case "null":
			return types.NullValue, nil
		case "list":
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return nil, err
			}
			vals := make([]ref.Val, len(items))
			for i, it := range items {
				x, err := DecodeValue(it)
				if err != nil {
					return nil, err
				}
				vals[i] = x
			}
			return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
		case "map":
			var pairs [][2]json.RawMessage
			if err := json.Unmarshal(v, &pairs); err != nil {
				return nil, err
			}
			m := map[ref.Val]ref.Val{}
			for _, p := range pairs {
				k, err := DecodeValue(p[0])
				if err != nil {
					return nil, err
				}
				x, err := DecodeValue(p[1])
				if err != nil {
					return nil, err
				}
				m[k] = x
			}
			return types.NewRefValMap(types.DefaultTypeAdapter, m), nil
		case "duration":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(s)
			return types.Duration{Duration: d}, err
		case "timestamp":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			t, err := time.Parse(time.RFC3339Nano, s)
			return types.Timestamp{Time: t}, err
		case "type":
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			t, err := ParseTypeName(s)
			if err != nil {
				return nil, err
			}
			return t, nil
		}
		return nil, fmt.Errorf("unknown value kind %q", k)
	}
	return nil, fmt.Errorf("empty value")
}

// EqualValues compares two encoded values; map entries in any order; doubles exactly.
func EqualValues(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return equalEnc(x, y)
}

func equalEnc(x, y any) bool {
	mx, ok1 := x.(map[string]any)
	my, ok2 := y.(map[string]any)
	if !ok1 || !ok2 {
		return fmt.Sprint(x) == fmt.Sprint(y)
	}
	if len(mx) != 1 || len(my) != 1 {
		return false
	}
	for k, vx := range mx {
		vy, ok := my[k]
		if !ok {
			return false
		}
		switch k {
		case "list":
			lx, _ := vx.([]any)
			ly, _ := vy.([]any)
			if len(lx) != len(ly) {
				return false
			}
			for i := range lx {
				if !equalEnc(lx[i], ly[i]) {
					return false
				}
			}
			return true
		case "map":
			px, _ := vx.([]any)
			py, _ := vy.([]any)
			if len(px) != len(py) {
				return false
			}
			used := make([]bool, len(py))
		next:
			for _, p := range px {
				pa, _ := p.([]any)
				for j, q := range py {
					qa, _ := q.([]any)
					if !used[j] && len(pa) == 2 && len(qa) == 2 && equalEnc(pa[0], qa[0]) && equalEnc(pa[1], qa[1]) {
						used[j] = true
						continue next
					}
				}
				return false
			}
			return true
		case "optional":
			if vx == nil || vy == nil {
				return vx == nil && vy == nil
			}
			return equalEnc(vx, vy)
		}
		return fmt.Sprintf("%#v", vx) == fmt.Sprintf("%#v", vy)
	}
	return false
}

// ConfFileStats counts one file's tests.
type ConfFileStats struct {
	File            string
	Tests, Included int
	SpecAgrees      int
	Skipped         map[string]int
	DiffersFromSpec []string
}

// ConformanceLines converts every *.textproto in dir.
func ConformanceLines(dir string) ([]ConfRequest, []*ConfFileStats, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.textproto"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no *.textproto in %s", dir)
	}
	sort.Strings(files)
	var out []ConfRequest
	var stats []*ConfFileStats
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var tf conftest.SimpleTestFile
		if err := (prototext.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &tf); err != nil {
			return nil, nil, fmt.Errorf("%s: %v", f, err)
		}
		st := &ConfFileStats{File: filepath.Base(f), Skipped: map[string]int{}}
		stats = append(stats, st)
		for _, sec := range tf.GetSection() {
			for _, t := range sec.GetTest() {
				st.Tests++
				req, why := convertTest(tf.GetName(), sec.GetName(), t)
				if why != "" {
					st.Skipped[why]++
					continue
				}
				ans := AnswerConformance(&req)
				if ans.Result == GoPanic || ans.Result == ToolError {
					st.Skipped["cel-go: "+ans.Result]++
					continue
				}
				ans.ID = ""
				req.Expect = &ans
				for k := 0; k < 16; k++ {
					again := AnswerConformance(&req)
					again.ID = ""
					known := CompareConf(ans, again) == Same && ans.Error == again.Error
					for _, x := range req.ExpectAlso {
						known = known || (CompareConf(x, again) == Same && x.Error == again.Error)
					}
					if !known {
						req.ExpectAlso = append(req.ExpectAlso, again)
					}
				}
				req.Spec = specVerdict(t, &ans)
				if req.Spec == "agrees" {
					st.SpecAgrees++
				} else if req.Spec == "differs" {
					st.DiffersFromSpec = append(st.DiffersFromSpec, req.ID)
				}
				st.Included++
				out = append(out, req)
			}
		}
	}
	return out, stats, nil
}

func convertTest(file, section string, t *conftest.SimpleTest) (ConfRequest, string) {
	req := ConfRequest{ID: file + "/" + section + "/" + t.GetName(), Expr: t.GetExpr(), Env: "stored"}
	switch {
	case t.GetDisableMacros():
		return req, "macros disabled"
	case t.GetDisableCheck():
		return req, "no type check"
	case t.GetCheckOnly():
		return req, "check only"
	case t.GetContainer() != "":
		return req, "container"
	case t.GetLocale() != "":
		return req, "locale"
	case t.GetUnknown() != nil || t.GetAnyUnknowns() != nil:
		return req, "unknowns"
	}
	for _, d := range t.GetTypeEnv() {
		id := d.GetIdent()
		if id == nil {
			return req, "function declaration"
		}
		name, ok := typeName(id.GetType())
		if !ok {
			return req, "declared type not representable (message, wrapper, abstract)"
		}
		if req.Decls == nil {
			req.Decls = map[string]string{}
		}
		req.Decls[d.GetName()] = name
	}
	for name, b := range t.GetBindings() {
		if b.GetValue() == nil {
			return req, "binding is an error or unknown"
		}
		enc, ok := valueEnc(b.GetValue())
		if !ok {
			return req, "binding not representable (message, enum)"
		}
		if req.Bindings == nil {
			req.Bindings = map[string]json.RawMessage{}
		}
		raw, _ := json.Marshal(enc)
		req.Bindings[name] = raw
	}
	return req, ""
}

func typeName(t *exprpb.Type) (string, bool) {
	switch k := t.GetTypeKind().(type) {
	case *exprpb.Type_Dyn:
		return "dyn", true
	case *exprpb.Type_Null:
		return "null_type", true
	case *exprpb.Type_Primitive:
		switch k.Primitive {
		case exprpb.Type_BOOL:
			return "bool", true
		case exprpb.Type_INT64:
			return "int", true
		case exprpb.Type_UINT64:
			return "uint", true
		case exprpb.Type_DOUBLE:
			return "double", true
		case exprpb.Type_STRING:
			return "string", true
		case exprpb.Type_BYTES:
			return "bytes", true
		}
	case *exprpb.Type_WellKnown:
		switch k.WellKnown {
		case exprpb.Type_TIMESTAMP:
			return "timestamp", true
		case exprpb.Type_DURATION:
			return "duration", true
		}
	case *exprpb.Type_ListType_:
		e, ok := typeName(k.ListType.GetElemType())
		return "list(" + e + ")", ok
	case *exprpb.Type_MapType_:
		kt, ok1 := typeName(k.MapType.GetKeyType())
		vt, ok2 := typeName(k.MapType.GetValueType())
		return "map(" + kt + "," + vt + ")", ok1 && ok2
	case *exprpb.Type_Type:
		return "type", true
	}
	return "", false
}

// valueEnc converts a cel.expr.Value into the conformance encoding.
func valueEnc(v *exprpb.Value) (any, bool) {
	switch k := v.GetKind().(type) {
	case *exprpb.Value_NullValue:
		return map[string]any{"null": nil}, true
	case *exprpb.Value_BoolValue:
		return map[string]any{"bool": k.BoolValue}, true
	case *exprpb.Value_Int64Value:
		return map[string]any{"int": strconv.FormatInt(k.Int64Value, 10)}, true
	case *exprpb.Value_Uint64Value:
		return map[string]any{"uint": strconv.FormatUint(k.Uint64Value, 10)}, true
	case *exprpb.Value_DoubleValue:
		return map[string]any{"double": encodeDouble(k.DoubleValue)}, true
	case *exprpb.Value_StringValue:
		return map[string]any{"string": k.StringValue}, true
	case *exprpb.Value_BytesValue:
		return map[string]any{"bytes": base64.StdEncoding.EncodeToString(k.BytesValue)}, true
	case *exprpb.Value_TypeValue:
		return map[string]any{"type": k.TypeValue}, true
	case *exprpb.Value_ListValue:
		items := []any{}
		for _, x := range k.ListValue.GetValues() {
			e, ok := valueEnc(x)
			if !ok {
				return nil, false
			}
			items = append(items, e)
		}
		return map[string]any{"list": items}, true
	case *exprpb.Value_MapValue:
		pairs := [][2]any{}
		for _, e := range k.MapValue.GetEntries() {
			ke, ok1 := valueEnc(e.GetKey())
			ve, ok2 := valueEnc(e.GetValue())
			if !ok1 || !ok2 {
				return nil, false
			}
			pairs = append(pairs, [2]any{ke, ve})
		}
		return map[string]any{"map": pairs}, true
	case *exprpb.Value_ObjectValue:
		switch k.ObjectValue.GetTypeUrl() {
		case "type.googleapis.com/google.protobuf.Duration":
			var d durationpb.Duration
			if k.ObjectValue.UnmarshalTo(&d) != nil {
				return nil, false
			}
			return map[string]any{"duration": encodeDuration(d.AsDuration())}, true
		case "type.googleapis.com/google.protobuf.Timestamp":
			var ts timestamppb.Timestamp
			if k.ObjectValue.UnmarshalTo(&ts) != nil {
				return nil, false
			}
			return map[string]any{"timestamp": ts.AsTime().UTC().Format(time.RFC3339Nano)}, true
		}
	}
	return nil, false
}

// specVerdict: does cel-spec's expected result agree with cel-go's answer here?
func specVerdict(t *conftest.SimpleTest, ans *ConfResponse) string {
	switch m := t.GetResultMatcher().(type) {
	case nil:
		// no matcher: the result is true
		if ans.Result == ValueResult && EqualValues(ans.Value, json.RawMessage(`{"bool":true}`)) {
			return "agrees"
		}
		return "differs"
	case *conftest.SimpleTest_Value:
		enc, ok := valueEnc(m.Value)
		if !ok {
			return "n/a"
		}
		raw, _ := json.Marshal(enc)
		if ans.Result == ValueResult && EqualValues(ans.Value, raw) {
			return "agrees"
		}
		return "differs"
	case *conftest.SimpleTest_EvalError, *conftest.SimpleTest_AnyEvalErrors:
		if ans.Result == RuntimeError || ans.Result == CompileError {
			return "agrees"
		}
		return "differs"
	case *conftest.SimpleTest_TypedResult:
		enc, ok := valueEnc(m.TypedResult.GetResult())
		if !ok {
			return "n/a"
		}
		raw, _ := json.Marshal(enc)
		if ans.Result == ValueResult && EqualValues(ans.Value, raw) {
			return "agrees"
		}
		return "differs"
	}
	return "n/a"
}

// CompareConf: does the C answer equal the expected one? Same rules as for selectors: the
// result, the value, the error text (a syntax error's first line only).
func CompareConf(want, got ConfResponse) Verdict {
	if want.Result != got.Result {
		return Differ
	}
	if want.Result == ValueResult {
		if EqualValues(want.Value, got.Value) {
			return Same
		}
		return Differ
	}
	return CompareResult(Result{want.Result, want.Error}, Result{got.Result, got.Error})
}
