// Package cluster runs a throwaway local Kubernetes control plane for the tests: an embedded
// etcd, the real kube-apiserver (TLS from a generated CA, RBAC, ServiceAccount token issuing)
// and optionally the real kube-controller-manager, all on 127.0.0.1 with free ports and all
// state under one directory. There is no kubelet: the harness (kubelet.go) marks Nodes
// Ready and finishes graceful pod deletions, as kwok does.
//
// Invariant: every process it starts dies with it. Children are started with
// PR_SET_PDEATHSIG (SIGKILL) from one OS thread that lives as long as the harness, in their
// own process group, and Stop ends them before etcd.
package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"gpulabel.test/k8s/internal/pki"
)

// Options says what to run and where.
type Options struct {
	Dir               string // state, logs, kubeconfigs; created if missing
	Bin               string // directory holding kube-apiserver (and kube-controller-manager)
	ControllerManager bool   // run kube-controller-manager (workload controllers, ServiceAccounts, ResourceClaims)
	Audit             bool   // audit log of every request but lists and watches in Dir/audit.log
	RunPods           bool   // mark bound pods Running, as a kubelet would
	Verbosity         int    // -v of the Kubernetes components
	Log               io.Writer
}

// Cluster is a running control plane.
type Cluster struct {
	opts       Options
	etcd       *embed.Etcd
	procs      []*proc
	kubelet    *kubelet
	cancel     context.CancelFunc
	died       chan error
	stopping   atomic.Bool
	Server     string // https://127.0.0.1:PORT
	Kubeconfig string // the admin kubeconfig (cluster-admin through system:masters)
}

// Info is what Start writes to Dir/ready once the cluster serves: the contract with the
// Python helper and other tools.
type Info struct {
	Server              string `json:"server"`
	Kubeconfig          string `json:"kubeconfig"`
	SchedulerKubeconfig string `json:"schedulerKubeconfig"`
	CA                  string `json:"ca"`
	AdminCert           string `json:"adminCert"`
	AdminKey            string `json:"adminKey"`
	AuditLog            string `json:"auditLog,omitempty"`
	Etcd                string `json:"etcd"`
	PID                 int    `json:"pid"`
}

const (
	// ServiceAccountIssuer is the iss of the tokens the cluster issues.
	ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	serviceCIDR          = "10.96.0.0/16"
)

var auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    verbs: ["list", "watch"]
  - level: Metadata
`

func (c *Cluster) logf(format string, args ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, "k8s-cluster: "+format+"\n", args...)
	}
}

// Start brings the control plane up and returns once the API server is ready, the harness's
// kubelet runs and (with the controller manager) the default ServiceAccount exists, so pods
// can be created at once. Dir/ready is written last.
func Start(ctx context.Context, o Options) (_ *Cluster, err error) {
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return nil, err
	}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager"} {
		if name == "kube-controller-manager" && !o.ControllerManager {
			continue
		}
		if _, err := os.Stat(filepath.Join(o.Bin, name)); err != nil {
			return nil, fmt.Errorf("%s not found in %s (make k8s builds it)", name, o.Bin)
		}
	}
	os.Remove(filepath.Join(o.Dir, "ready"))
	c := &Cluster{opts: o, died: make(chan error, 4)}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	start := time.Now()
	files, err := c.writePKI()
	if err != nil {
		return nil, err
	}
	if err := c.startEtcd(); err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	etcdURL := "http://" + c.etcd.Clients[0].Addr().String()
	c.logf("etcd serves on %s (%.1fs)", etcdURL, time.Since(start).Seconds())
	if err := c.startAPIServer(ctx, files, etcdURL); err != nil {
		return nil, err
	}
	c.logf("kube-apiserver serves on %s (%.1fs)", c.Server, time.Since(start).Seconds())
	kctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	if c.kubelet, err = startKubelet(kctx, c.writeKubeconfig("harness.kubeconfig", files.harness, ""),
		o.RunPods, c.logf); err != nil {
		return nil, fmt.Errorf("harness kubelet: %w", err)
	}
	if o.ControllerManager {
		if err := c.startControllerManager(ctx, files); err != nil {
			return nil, err
		}
		if err := c.kubelet.waitServiceAccount(ctx, "default", "default", 60*time.Second); err != nil {
			return nil, fmt.Errorf("kube-controller-manager did not create the default ServiceAccount: %w (log: %s)",
				err, tail(filepath.Join(o.Dir, "kube-controller-manager.log")))
		}
		c.logf("kube-controller-manager runs (%.1fs)", time.Since(start).Seconds())
	}
	info := Info{Server: c.Server, Kubeconfig: c.Kubeconfig,
		SchedulerKubeconfig: filepath.Join(o.Dir, "kube-scheduler.kubeconfig"),
		CA:                  filepath.Join(o.Dir, "ca.crt"),
		AdminCert:           filepath.Join(o.Dir, "admin.crt"), AdminKey: filepath.Join(o.Dir, "admin.key"),
		Etcd: etcdURL, PID: os.Getpid()}
	if o.Audit {
		info.AuditLog = filepath.Join(o.Dir, "audit.log")
	}
	js, _ := json.MarshalIndent(info, "", "  ")
	tmp := filepath.Join(o.Dir, "ready.tmp")
	if err := os.WriteFile(tmp, append(js, '\n'), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(o.Dir, "ready")); err != nil {
		return nil, err
	}
	c.logf("ready in %.1fs; KUBECONFIG=%s", time.Since(start).Seconds(), c.Kubeconfig)
	return c, nil
}

// Died delivers an error when a component exits on its own.
func (c *Cluster) Died() <-chan error { return c.died }

// Stop ends every component (controller manager and API server first, then etcd) and
// removes Dir/ready. Safe to call more than once.
func (c *Cluster) Stop() {
	c.stopping.Store(true)
	os.Remove(filepath.Join(c.opts.Dir, "ready"))
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	c.procs = nil
	if c.kubelet != nil {
		c.kubelet.wait()
		c.kubelet = nil
	}
	if c.etcd != nil {
		c.etcd.Close()
		c.etcd = nil
	}
}

type pkiFiles struct {
	ca                                    *pki.CA
	admin, harness, controllers, schedule *pki.Pair
	saKey, saPub, serveCert, serveKey     string
}

func (c *Cluster) writePKI() (*pkiFiles, error) {
	d := c.opts.Dir
	ca, err := pki.NewCA("k8s-cluster-ca")
	if err != nil {
		return nil, err
	}
	f := &pkiFiles{ca: ca}
	if _, err := pki.Write(d, "ca.crt", ca.CertPEM); err != nil {
		return nil, err
	}
	serving, err := ca.Serving("kube-apiserver",
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")})
	if err != nil {
		return nil, err
	}
	if f.serveCert, err = pki.Write(d, "apiserver.crt", serving.CertPEM); err != nil {
		return nil, err
	}
	if f.serveKey, err = pki.Write(d, "apiserver.key", serving.KeyPEM); err != nil {
		return nil, err
	}
	if f.admin, err = ca.Client("kubernetes-admin", "system:masters"); err != nil {
		return nil, err
	}
	if _, err := pki.Write(d, "admin.crt", f.admin.CertPEM); err != nil {
		return nil, err
	}
	if _, err := pki.Write(d, "admin.key", f.admin.KeyPEM); err != nil {
		return nil, err
	}
	if f.harness, err = ca.Client("k8s-cluster-kubelet", "system:masters"); err != nil {
		return nil, err
	}
	// the bootstrap RBAC policy has roles for these two identities, as kubeadm uses them
	if f.controllers, err = ca.Client("system:kube-controller-manager"); err != nil {
		return nil, err
	}
	if f.schedule, err = ca.Client("system:kube-scheduler"); err != nil {
		return nil, err
	}
	priv, pub, err := pki.SigningKey()
	if err != nil {
		return nil, err
	}
	if f.saKey, err = pki.Write(d, "sa.key", priv); err != nil {
		return nil, err
	}
	if f.saPub, err = pki.Write(d, "sa.pub", pub); err != nil {
		return nil, err
	}
	return f, nil
}

// writeKubeconfig writes Dir/name for a client certificate (or a token) and returns its path.
func (c *Cluster) writeKubeconfig(name string, p *pki.Pair, token string) string {
	ca, _ := os.ReadFile(filepath.Join(c.opts.Dir, "ca.crt"))
	var user string
	if p != nil {
		user = fmt.Sprintf("    client-certificate-data: %s\n    client-key-data: %s\n",
			base64.StdEncoding.EncodeToString(p.CertPEM), base64.StdEncoding.EncodeToString(p.KeyPEM))
	} else {
		user = fmt.Sprintf("    token: %s\n", token)
	}
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: k8s-cluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
%scontexts:
- name: k8s-cluster
  context:
    cluster: k8s-cluster
    user: %s
current-context: k8s-cluster
`, c.Server, base64.StdEncoding.EncodeToString(ca), strings.TrimSuffix(name, ".kubeconfig"), user,
		strings.TrimSuffix(name, ".kubeconfig"))
	path := filepath.Join(c.opts.Dir, name)
	os.WriteFile(path, []byte(text), 0o600)
	return path
}

func (c *Cluster) startEtcd() error {
	cfg := embed.NewConfig()
	cfg.Name = "k8s-cluster"
	cfg.Dir = filepath.Join(c.opts.Dir, "etcd")
	os.RemoveAll(cfg.Dir)
	// port 0: the kernel picks free ports; a one-member cluster never dials its peer URL
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls = []url.URL{local}
	cfg.AdvertiseClientUrls = []url.URL{local}
	cfg.ListenPeerUrls = []url.URL{local}
	cfg.AdvertisePeerUrls = []url.URL{local}
	cfg.InitialCluster = cfg.Name + "=" + local.String()
	cfg.LogOutputs = []string{filepath.Join(c.opts.Dir, "etcd.log")}
	cfg.LogLevel = "warn"
	// test data: durability across a power cut does not matter, write latency does
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	c.etcd = e
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return err
	case <-time.After(60 * time.Second):
		return errors.New("not ready after 60s")
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) startAPIServer(ctx context.Context, f *pkiFiles, etcdURL string) error {
	d := c.opts.Dir
	if c.opts.Audit {
		if err := os.WriteFile(filepath.Join(d, "audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
			return err
		}
	}
	// A free port can be taken between our probe and the server's bind: try a few.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.Server = "https://127.0.0.1:" + strconv.Itoa(port)
		args := []string{
			"--etcd-servers=" + etcdURL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + f.serveCert, "--tls-private-key-file=" + f.serveKey,
			"--client-ca-file=" + filepath.Join(d, "ca.crt"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=" + ServiceAccountIssuer,
			"--service-account-key-file=" + f.saPub,
			"--service-account-signing-key-file=" + f.saKey,
			"--service-cluster-ip-range=" + serviceCIDR,
			"--allow-privileged=true",
			// the kubernetes Service's endpoints may not be a loopback address; no pod reaches it anyway
			"--endpoint-reconciler-type=none",
			"--profiling=false",
			"--cert-dir=" + filepath.Join(d, "certs"),
			"--v=" + strconv.Itoa(c.opts.Verbosity),
		}
		if c.opts.Audit {
			args = append(args, "--audit-policy-file="+filepath.Join(d, "audit-policy.yaml"),
				"--audit-log-path="+filepath.Join(d, "audit.log"), "--audit-log-format=json",
				"--audit-log-mode=blocking")
		}
		logPath := filepath.Join(d, "kube-apiserver.log")
		p, err := c.spawn("kube-apiserver", args, logPath)
		if err != nil {
			return err
		}
		c.Kubeconfig = c.writeKubeconfig("admin.kubeconfig", f.admin, "")
		c.writeKubeconfig("kube-scheduler.kubeconfig", f.schedule, "")
		c.writeKubeconfig("kube-controller-manager.kubeconfig", f.controllers, "")
		lastErr = c.waitReady(ctx, p, f)
		if lastErr == nil {
			return nil
		}
		c.stopping.Store(true)
		p.stop(5 * time.Second)
		c.stopping.Store(false)
		c.procs = c.procs[:len(c.procs)-1]
		if !strings.Contains(tail(logPath), "address already in use") {
			break
		}
	}
	return lastErr
}

// waitReady polls /readyz with the admin certificate until it answers 200.
func (c *Cluster) waitReady(ctx context.Context, p *proc, f *pkiFiles) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.ca.CertPEM)
	cert, err := tls.X509KeyPair(f.admin.CertPEM, f.admin.KeyPEM)
	if err != nil {
		return err
	}
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}}}
	defer cl.CloseIdleConnections()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("kube-apiserver exited: %s", tail(p.log))
		}
		resp, err := cl.Get(c.Server + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(body))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("kube-apiserver not ready after 90s (last answer: %s); log: %s", last, tail(p.log))
}

func (c *Cluster) startControllerManager(ctx context.Context, f *pkiFiles) error {
	d := c.opts.Dir
	args := []string{
		"--kubeconfig=" + filepath.Join(d, "kube-controller-manager.kubeconfig"),
		"--secure-port=0",
		"--leader-elect=false",
		// each controller gets its own ServiceAccount token, as kubeadm runs it
		"--use-service-account-credentials=true",
		"--root-ca-file=" + filepath.Join(d, "ca.crt"),
		"--controllers=serviceaccount-controller,deployment-controller,replicaset-controller," +
			"statefulset-controller,daemonset-controller,job-controller,garbage-collector-controller," +
			"namespace-controller,disruption-controller,resource-claim-controller",
		"--v=" + strconv.Itoa(c.opts.Verbosity),
	}
	_, err := c.spawn("kube-controller-manager", args, filepath.Join(d, "kube-controller-manager.log"))
	return err
}

// tail returns the last lines of a log file, on one line, for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return path + ": " + strings.Join(lines, " | ")
}

// ---- child processes ------------------------------------------------------------------

type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// The parent-death signal is bound to the OS thread that forked the child, so every child
// is forked from one locked thread that never exits.
var (
	spawnOnce sync.Once
	spawnReq  chan func()
)

func onSpawnThread(fn func()) {
	spawnOnce.Do(func() {
		spawnReq = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range spawnReq {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawnReq <- func() { fn(); close(done) }
	<-done
}

func (c *Cluster) spawn(name string, args []string, logPath string) (*proc, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(c.opts.Bin, name), args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Dir = c.opts.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	onSpawnThread(func() { err = cmd.Start() })
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		// checked before done is closed: stop() waits for done, so it sees its own flag
		if !c.stopping.Load() {
			select {
			case c.died <- fmt.Errorf("%s exited (%v): %s", name, p.err, tail(logPath)):
			default:
			}
		}
		close(p.done)
	}()
	c.procs = append(c.procs, p)
	return p, nil
}
