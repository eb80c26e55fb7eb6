package celoracle

// The benchmark's input (typical selectors, 100,000 devices) and cel-go's side of it: each
// selector compiled as the scheduler's cache does, then DeviceMatches per device, timed.
// bench/cel_bench.sh runs this and cel-eval --bench on the same files and prints the ratios.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// BenchSelector is one line of selectors.jsonl.
type BenchSelector struct {
	ID   string `json:"id"`
	Expr string `json:"expr"`
}

// BenchResult is one output line of --bench.
type BenchResult struct {
	ID        string  `json:"id"`
	CompileNs float64 `json:"compileNs"`
	EvalNs    float64 `json:"evalNs"`
	EvalCPUNs float64 `json:"evalCpuNs"`
	Matches   int     `json:"matches"`
	Errors    int     `json:"errors"`
}

// BenchSelectors are typical DeviceClass and claim selectors.
var BenchSelectors = []BenchSelector{
	{"driver", `device.driver == "gpu.example.com"`},
	{"string-attr", `device.attributes["gpu.example.com"].model == "A100"`},
	{"quantity", `device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`},
	{"semver", `device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("535.0.0"))`},
	{"int-and-bool", `device.attributes["gpu.example.com"].cores >= 64 && device.attributes["gpu.example.com"].ecc`},
	{"bind", `cel.bind(dra, device.attributes["gpu.example.com"], dra.model.startsWith("A") && dra.index < 4)`},
	{"has-guard", `"gpu.example.com" in device.attributes && has(device.attributes["gpu.example.com"].mig) && !device.attributes["gpu.example.com"].mig`},
	{"regex", `device.attributes["gpu.example.com"].model.matches("^(A|H)100")`},
	{"optional", `device.attributes["gpu.example.com"].?family.orValue("") == "ampere"`},
	{"mixed", `device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("16Gi")) && device.attributes["gpu.example.com"].model.lowerAscii().contains("100") && device.attributes["gpu.example.com"].cudaVersion.major() >= 12`},
}

// BenchDevices makes n devices of one GPU driver, reproducibly.
func BenchDevices(n int) []Device {
	r := rand.New(rand.NewPCG(7, 7))
	models := []string{"A100", "H100", "T4", "L4", "A10", "V100"}
	families := []string{"ampere", "hopper", "turing", "ada", "volta"}
	mems := []string{"16Gi", "24Gi", "40Gi", "80Gi", "94Gi", "32Gi"}
	drivers := []string{"535.104.5", "550.54.15", "525.60.13", "560.35.3", "470.223.2"}
	cudas := []string{"12.2.0", "12.4.1", "11.8.0", "12.6.0"}
	out := make([]Device, n)
	for i := range out {
		m := r.IntN(len(models))
		attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"model":         {StringValue: ptrTo(models[m])},
			"family":        {StringValue: ptrTo(families[m%len(families)])},
			"uuid":          {StringValue: ptrTo(fmt.Sprintf("GPU-%08x-%04x", r.Uint32(), i%65536))},
			"index":         {IntValue: ptrTo(int64(i % 8))},
			"cores":         {IntValue: ptrTo(int64(32 * (1 + r.IntN(4))))},
			"ecc":           {BoolValue: ptrTo(r.IntN(4) != 0)},
			"driverVersion": {VersionValue: ptrTo(drivers[r.IntN(len(drivers))])},
			"cudaVersion":   {VersionValue: ptrTo(cudas[r.IntN(len(cudas))])},
		}
		if r.IntN(3) != 0 {
			attrs["mig"] = resourceapi.DeviceAttribute{BoolValue: ptrTo(r.IntN(2) == 0)}
		}
		out[i] = Device{Driver: "gpu.example.com", Attributes: attrs,
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: resource.MustParse(mems[m])},
			}}
		out[i].Canonicalize()
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// WriteBenchFiles writes DIR/selectors.jsonl and DIR/devices.json.
func WriteBenchFiles(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, s := range BenchSelectors {
		b.Write(Marshal(s))
	}
	if err := os.WriteFile(filepath.Join(dir, "selectors.jsonl"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	doc, err := json.Marshal(struct {
		Devices []Device `json:"devices"`
	}{BenchDevices(n)})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "devices.json"), append(doc, '\n'), 0o644)
}

// ReadBenchFiles reads what WriteBenchFiles wrote.
func ReadBenchFiles(selPath, devPath string) ([]BenchSelector, []Device, error) {
	data, err := os.ReadFile(selPath)
	if err != nil {
		return nil, nil, err
	}
	var sels []BenchSelector
	for n, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var s BenchSelector
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %v", selPath, n+1, err)
		}
		sels = append(sels, s)
	}
	data, err = os.ReadFile(devPath)
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Devices []Device `json:"devices"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", devPath, err)
	}
	for i := range doc.Devices {
		doc.Devices[i].Canonicalize()
	}
	return sels, doc.Devices, nil
}

// Bench times one selector: compile (mean of compiles), DeviceMatches per device (median of
// runs over all devices).
func Bench(s BenchSelector, devs []dracel.Device, runs, compiles int) (BenchResult, error) {
	comp := dracel.GetCompiler(Features)
	opts := dracel.Options{DisableCostEstimation: true}
	res := comp.CompileCELExpression(s.Expr, opts)
	if res.Error != nil {
		return BenchResult{}, fmt.Errorf("%s: %s", s.ID, res.Error.Detail)
	}
	t0 := time.Now()
	for i := 0; i < compiles; i++ {
		comp.CompileCELExpression(s.Expr, opts)
	}
	out := BenchResult{ID: s.ID, CompileNs: float64(time.Since(t0).Nanoseconds()) / float64(compiles)}
	ctx := benchCtx()
	var per, perCPU []float64
	for r := 0; r < runs; r++ {
		matches, errs := 0, 0
		c := cpuNow()
		t := time.Now()
		for i := range devs {
			ok, _, err := res.DeviceMatches(ctx, devs[i])
			if err != nil {
				errs++
			} else if ok {
				matches++
			}
		}
		per = append(per, float64(time.Since(t).Nanoseconds())/float64(len(devs)))
		perCPU = append(perCPU, float64(cpuNow()-c)/float64(len(devs)))
		out.Matches, out.Errors = matches, errs
	}
	sort.Float64s(per)
	sort.Float64s(perCPU)
	out.EvalNs = per[len(per)/2]
	out.EvalCPUNs = perCPU[len(perCPU)/2]
	return out, nil
}

func benchCtx() context.Context { return context.Background() }

// cpuNow is the process's CPU time (user + system) in ns: the garbage collector's work on other
// threads counts, as it is part of what an evaluation costs.
func cpuNow() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
