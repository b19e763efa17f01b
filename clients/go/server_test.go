package groundwire_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

// liveServer is a `python -m server serve --port 0` child process (the real groundwire server).
type liveServer struct {
	Address string
	cmd     *exec.Cmd
	mu      sync.Mutex
	log     bytes.Buffer
	exited  chan struct{}
}

var listening = regexp.MustCompile(`groundwire listening on ([\d.]+):(\d+)`)

// repoRoot is the repository root (this package lives in clients/go).
func repoRoot() string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return root
}

func python() string {
	if p := os.Getenv("GROUNDWIRE_PYTHON"); p != "" {
		return p
	}
	return filepath.Join(repoRoot(), ".venv", "bin", "python")
}

// startServer spawns the server with its data in a fresh directory under dataRoot and extra
// environment variables (GROUNDWIRE_*), and returns once it listens. ready(server) must then
// confirm it is SERVING (plaintext servers: waitServing; TLS servers: the caller's own check).
func startServer(dataRoot string, env ...string) (*liveServer, error) {
	dataDir, err := os.MkdirTemp(dataRoot, "data-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python(), "-m", "server", "serve", "--port", "0", "--data-dir", dataDir)
	cmd.Dir = repoRoot()
	cmd.Env = []string{"GROUNDWIRE_MODEL__DEVICE=cpu", "GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS=false", "GROUNDWIRE_SERVER__PROCESSES=1"}
	for _, kv := range os.Environ() {
		// The server reads every GROUNDWIRE_* variable as a setting: not ours (GROUNDWIRE_PYTHON...).
		if !strings.HasPrefix(kv, "GROUNDWIRE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // one pipe for both, in order
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", python(), err)
	}
	s := &liveServer{cmd: cmd, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(out)
		scanner.Buffer(make([]byte, 64<<10), 1<<20)
		for scanner.Scan() {
			line := scanner.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1] + ":" + m[2]:
				default:
				}
			}
		}
		cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.Address = <-found:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("the server exited before listening:\n%s", s.Log())
	case <-time.After(5 * time.Minute):
		s.Stop()
		return nil, fmt.Errorf("the server did not listen within 5 minutes:\n%s", s.Log())
	}
}

// Log is everything the server printed so far.
func (s *liveServer) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Stop kills the server's process group and waits for it.
func (s *liveServer) Stop() {
	if s.cmd.Process != nil {
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.exited
}

// waitServing polls the health service (through a client made with options) until it answers SERVING.
func (s *liveServer) waitServing(ctx context.Context, options ...groundwire.Option) error {
	client, err := groundwire.New(s.Address, options...)
	if err != nil {
		return err
	}
	defer client.Close()
	for {
		serving, err := client.Health(ctx)
		if err == nil && serving {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not SERVING (last error %v):\n%s", err, s.Log())
		case <-s.exited:
			return fmt.Errorf("the server exited:\n%s", s.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// shared is the plaintext server without authentication that most tests use.
var (
	shared   *liveServer
	tempRoot string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if tempRoot, err = os.MkdirTemp("", "groundwire-go-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tempRoot)
	if shared, err = startServer(tempRoot); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := shared.waitServing(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	securedLog := stopSecured()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- server log ---\n%s--- secured server log ---\n%s", shared.Log(), securedLog)
	}
	return code
}
