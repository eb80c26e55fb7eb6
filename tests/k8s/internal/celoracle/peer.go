package celoracle

// The implementation under test as a subprocess: request lines through its stdin, answer
// lines from its stdout, many in flight. A crash or a hang is an answer too (the line it was
// working on gets a "crash"/"timeout" result) and the process is started again.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

const (
	Crash   = "crash"
	Timeout = "timeout"
)

// Peer is one running build/cel-eval (or any tool speaking the protocol).
type Peer struct {
	Path    string
	Args    []string
	Timeout time.Duration
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan []byte
	stderr  *tailBuffer
}

type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (p *Peer) start() error {
	cmd := exec.Command(p.Path, p.Args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.stderr = &tailBuffer{}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Path, err)
	}
	p.cmd, p.stdin = cmd, in
	lines := make(chan []byte, 256)
	p.lines = lines
	go func() {
		r := bufio.NewReaderSize(out, 1<<16)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && err == nil {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	return nil
}

// Stop ends the process (closing its stdin first, then killing it if it lingers).
func (p *Peer) Stop() {
	if p.cmd == nil {
		return
	}
	p.stdin.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	p.cmd = nil
}

// Ask sends the lines (each ending in '\n') and returns one answer per line: the decoded
// response, or Result "crash"/"timeout"/"tool-error" when the tool died, hung or wrote a line
// that is not a response. A dead or hung tool is restarted for the lines after.
func (p *Peer) Ask(reqs [][]byte) []Response {
	raw := p.AskRaw(reqs)
	out := make([]Response, len(reqs))
	for i, a := range raw {
		if a.Failed != nil {
			out[i] = *a.Failed
			continue
		}
		if err := json.Unmarshal(a.Line, &out[i]); err != nil {
			out[i] = Response{Result: ToolError, Error: fmt.Sprintf("not a response line: %v: %.200q", err, a.Line)}
		}
	}
	return out
}

// RawAnswer is one answer line, or why there is none (Result crash or timeout).
type RawAnswer struct {
	Line   []byte
	Failed *Response
}

// AskRaw is Ask without decoding the lines.
func (p *Peer) AskRaw(reqs [][]byte) []RawAnswer {
	out := make([]RawAnswer, len(reqs))
	fail := func(i int, result, msg string) { out[i].Failed = &Response{Result: result, Error: msg} }
	i := 0
outer:
	for i < len(reqs) {
		if p.cmd == nil {
			if err := p.start(); err != nil {
				for ; i < len(reqs); i++ {
					fail(i, Crash, err.Error())
				}
				return out
			}
		}
		// write from i on in the background; answers come in order
		batch := reqs[i:]
		stdin := p.stdin
		go func() {
			w := bufio.NewWriterSize(stdin, 1<<16)
			for _, l := range batch {
				if _, err := w.Write(l); err != nil {
					return
				}
				if w.Buffered() > 32<<10 {
					if w.Flush() != nil {
						return
					}
				}
			}
			w.Flush()
		}()
		timeout := p.Timeout
		if timeout == 0 {
			timeout = 20 * time.Second
		}
		timer := time.NewTimer(timeout)
		for i < len(reqs) {
			select {
			case line, ok := <-p.lines:
				if !ok {
					// the tool died on reqs[i]
					p.cmd.Wait()
					fail(i, Crash, fmt.Sprintf("%s; stderr: %s", p.cmd.ProcessState.String(), lastLine(p.stderr.b)))
					p.cmd = nil
					i++
					timer.Stop()
					continue outer
				}
				out[i].Line = line
				i++
				if !timer.Stop() {
					<-timer.C
				}
				timer.Reset(timeout)
			case <-timer.C:
				fail(i, Timeout, fmt.Sprintf("no answer in %s", timeout))
				i++
				p.cmd.Process.Kill()
				for range p.lines {
				}
				p.cmd.Wait()
				p.cmd = nil
				continue outer
			}
		}
		timer.Stop()
	}
	return out
}

func lastLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}

// Exists says whether path is an executable file.
func Exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
