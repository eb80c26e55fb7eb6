// Package celoracle is the judge of the C CEL implementation (src/cel/): it answers the
// JSON-lines protocol of build/cel-eval (/work/coord/cel-contract.md, docs/cel-testing.md) with
// k8s.io/dynamic-resource-allocation/cel v0.37.2, compiled and evaluated as kube-scheduler
// v1.37.2 and the API server's validation use it. Test tooling only, never shipped.
package celoracle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// Features are kube-scheduler v1.37.2's defaults: DRAConsumableCapacity is beta and on,
// DRAListTypeAttributes alpha and off (pkg/features/kube_features.go).
var Features = dracel.Features{EnableConsumableCapacity: true, EnableListTypeAttributes: false}

// Request is one input line. Fields the oracle does not know (conformance's "bindings",
// "expect", ...) are ignored.
type Request struct {
	ID        json.RawMessage `json:"id,omitempty"`
	Expr      *string         `json:"expr"`
	Env       string          `json:"env,omitempty"`
	CostLimit *uint64         `json:"costLimit,omitempty"`
	Device    *Device         `json:"device,omitempty"`
	Devices   []Device        `json:"devices,omitempty"`
}

// Device is a resource.k8s.io/v1 Device's CEL-visible fields plus its driver. Attribute and
// capacity values decode exactly as the API types do ({"int": 3}, {"value": "12Gi"}).
type Device struct {
	Driver                   string                                                    `json:"driver"`
	AllowMultipleAllocations *bool                                                     `json:"allowMultipleAllocations,omitempty"`
	Attributes               map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes,omitempty"`
	Capacity                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity,omitempty"`
	// capText: a capacity's text as the generator wrote it (1.5Gi), for the JSON sent to the
	// tool under test: it must canonicalize as the API server does
	capText map[resourceapi.QualifiedName]string
}

// MarshalJSON writes the device; capacities in the text they were written in, if known.
func (d Device) MarshalJSON() ([]byte, error) {
	type plain Device
	if len(d.capText) == 0 {
		return json.Marshal(plain(d))
	}
	type capValue struct {
		Value string `json:"value"`
	}
	caps := map[resourceapi.QualifiedName]capValue{}
	for name, c := range d.Capacity {
		text, ok := d.capText[name]
		if !ok {
			text = c.Value.String()
		}
		caps[name] = capValue{text}
	}
	return json.Marshal(struct {
		plain
		Capacity map[resourceapi.QualifiedName]capValue `json:"capacity,omitempty"`
	}{plain(d), caps})
}

// Result is one evaluation's answer.
type Result struct {
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
}

// Response is one output line: Result/Error for "device" (or a compile error, or a tool
// error), Results for "devices". MaxCost is the API server's cost estimate ("env":"new" only,
// when the expression compiled): informational, compared only when both sides give it.
type Response struct {
	ID      json.RawMessage `json:"id"`
	Result  string          `json:"result,omitempty"`
	Error   string          `json:"error,omitempty"`
	Results []Result        `json:"results,omitempty"`
	MaxCost *uint64         `json:"maxCost,omitempty"`
}

const (
	True         = "true"
	False        = "false"
	CompileError = "compile-error"
	RuntimeError = "runtime-error"
	ToolError    = "tool-error"
	// GoPanic: the real library panicked (cel-go v0.29.2 does on an optional list element of
	// type dyn, `[?dyn(optional.of(1))]`); the API server answers such a request with an
	// internal error, kube-scheduler would crash. Not compared.
	GoPanic = "go-panic"
)

// Oracle compiles with the real compiler, which GetCompiler caches process-wide.
type Oracle struct{}

// ParseRequest decodes one line; a line that is not a JSON object or lacks "expr" gives the
// tool-error response to write instead.
func ParseRequest(line []byte) (*Request, *Response) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		// echo the id when the line is an object with one
		var partial struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &partial)
		return nil, &Response{ID: idOrNull(partial.ID), Result: ToolError, Error: "bad request: " + err.Error()}
	}
	if req.Expr == nil {
		return nil, &Response{ID: idOrNull(req.ID), Result: ToolError, Error: `bad request: no "expr"`}
	}
	if req.Env != "" && req.Env != "stored" && req.Env != "new" {
		return nil, &Response{ID: idOrNull(req.ID), Result: ToolError, Error: fmt.Sprintf(`bad request: "env" must be "stored" or "new", not %q`, req.Env)}
	}
	if req.Device != nil && req.Devices != nil {
		return nil, &Response{ID: idOrNull(req.ID), Result: ToolError, Error: `bad request: both "device" and "devices"`}
	}
	if req.Device != nil {
		req.Device.Canonicalize()
	}
	for i := range req.Devices {
		req.Devices[i].Canonicalize()
	}
	return &req, nil
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// Compiled is a compiled request: the program, or the compile error response.
type Compiled struct {
	res     dracel.CompilationResult
	failed  *Response
	maxCost *uint64
}

// Compile compiles req.Expr as the scheduler does ("stored": Cache.GetOrCompile, no cost
// estimation) or as the API server validates a new object ("new": the length limit, the
// NewExpressions environment, the estimated cost against CELSelectorExpressionMaxCost).
func (Oracle) Compile(req *Request) *Compiled {
	expr := *req.Expr
	opts := dracel.Options{DisableCostEstimation: true, CostLimit: req.CostLimit}
	isNew := req.Env == "new"
	if isNew {
		// pkg/apis/resource/validation validateCELExpression
		if len(expr) > resourceapi.CELSelectorExpressionMaxLength {
			return &Compiled{failed: &Response{Result: CompileError,
				Error: field.TooLong(field.NewPath("x"), "", resourceapi.CELSelectorExpressionMaxLength).ErrorBody()}}
		}
		envType := environment.NewExpressions
		opts.EnvType = &envType
		opts.DisableCostEstimation = false
	}
	res := dracel.GetCompiler(Features).CompileCELExpression(expr, opts)
	if res.Error != nil {
		return &Compiled{failed: &Response{Result: CompileError, Error: res.Error.Detail}}
	}
	c := &Compiled{res: res}
	if isNew {
		cost := res.MaxCost
		c.maxCost = &cost
		if res.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
			return &Compiled{failed: &Response{Result: CompileError, MaxCost: &cost,
				Error: field.Forbidden(field.NewPath("x"), "too complex, exceeds cost limit").ErrorBody()}}
		}
	}
	return c
}

// Error is the compile error response, or nil.
func (c *Compiled) Error() *Response { return c.failed }

// Eval runs DeviceMatches on one device (as the structured allocator builds cel.Device).
func (c *Compiled) Eval(d *Device) Result {
	ok, _, err := c.res.DeviceMatches(context.Background(), d.CEL())
	if err != nil {
		return Result{Result: RuntimeError, Error: err.Error()}
	}
	if ok {
		return Result{Result: True}
	}
	return Result{Result: False}
}

// Canonicalize stores each capacity as the API server does: a Quantity is written in its
// canonical form (1.5Gi as 1536Mi) and kube-scheduler reads it back from that, which changes
// its internal representation, and with it what asInteger() answers.
func (d *Device) Canonicalize() {
	for name, c := range d.Capacity {
		c.Value = resource.MustParse(c.Value.String())
		d.Capacity[name] = c
	}
}

// CEL is the dracel.Device view of d.
func (d *Device) CEL() dracel.Device {
	return dracel.Device{Driver: d.Driver, AllowMultipleAllocations: d.AllowMultipleAllocations,
		Attributes: d.Attributes, Capacity: d.Capacity}
}

// Answer is the whole protocol for one parsed request.
func (o Oracle) Answer(req *Request) (resp Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = Response{ID: idOrNull(req.ID), Result: GoPanic, Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	c := o.Compile(req)
	if c.failed != nil {
		r := *c.failed
		r.ID = idOrNull(req.ID)
		return r
	}
	resp = Response{ID: idOrNull(req.ID), MaxCost: c.maxCost}
	if req.Devices != nil {
		resp.Results = make([]Result, len(req.Devices))
		for i := range req.Devices {
			resp.Results[i] = c.Eval(&req.Devices[i])
		}
		return resp
	}
	d := req.Device
	if d == nil {
		d = &Device{}
	}
	r := c.Eval(d)
	resp.Result, resp.Error = r.Result, r.Error
	return resp
}

// AnswerLine answers one input line.
func (o Oracle) AnswerLine(line []byte) Response {
	req, bad := ParseRequest(line)
	if bad != nil {
		return *bad
	}
	return o.Answer(req)
}

// Marshal writes a response as one line without HTML escaping.
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// cannot happen for our types; keep the stream line-aligned anyway
		return []byte(fmt.Sprintf("{\"id\":null,\"result\":\"tool-error\",\"error\":%q}\n", "encode: "+err.Error()))
	}
	return b.Bytes()
}
