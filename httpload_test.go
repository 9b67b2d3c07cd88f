package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// loadRequests is how many requests each load run sends at once, and
// loadRounds how many runs the figures pool.
const (
	loadRequests = 200
	loadRounds   = 3
)

// loadTarget is a repository a load request asks for, and Gitea's answer.
type loadTarget struct {
	owner, repo string
	status      int
}

// loadResult is one run of concurrent requests: the latency of each, the
// wall time from the first send to the last answer, and the CPU time this
// process (client and, when it runs here, the MCP server) and Gitea spent
// meanwhile.
type loadResult struct {
	latency          []time.Duration
	wall, cpu, gitea time.Duration
}

// add pools the latencies, wall and CPU time of another run.
func (r *loadResult) add(o loadResult) {
	r.latency = append(r.latency, o.latency...)
	r.wall += o.wall
	r.cpu += o.cpu
	r.gitea += o.gitea
}

// perReq returns d per request.
func (r loadResult) perReq(d time.Duration) time.Duration {
	return (d / time.Duration(len(r.latency))).Round(time.Microsecond)
}

// String reports throughput, the 50th and 99th latency percentiles and the
// CPU time per request here and in Gitea.
func (r loadResult) String() string {
	return fmt.Sprintf("%d in %v (%.0f req/s), p50 %v, p99 %v, CPU/req here %v, in Gitea %v", len(r.latency), r.wall.Round(time.Millisecond),
		float64(len(r.latency))/r.wall.Seconds(), r.percentile(50), r.percentile(99), r.perReq(r.cpu), r.perReq(r.gitea))
}

// giteaCPU returns the user and system CPU time the Gitea web process pid
// has used, in steps of a clock tick (10 ms), or 0 when it cannot be read.
func giteaCPU(pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := bytes.LastIndexByte(stat, ')'); err == nil && i >= 0 {
		if f := strings.Fields(string(stat[i+1:])); len(f) > 12 { // state first: utime is field 14
			user, _ := strconv.Atoi(f[11])
			sys, _ := strconv.Atoi(f[12])
			return time.Duration(user+sys) * 10 * time.Millisecond
		}
	}
	return 0
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// percentile returns the nearest-rank p-th percentile of the latencies.
func (r loadResult) percentile(p float64) time.Duration {
	s := slices.Sorted(slices.Values(r.latency))
	return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)].Round(10 * time.Microsecond)
}

// loadRun calls do(i) for i in [0, n), at most conc at a time, each in its
// own goroutine, and returns the latencies, the CPU time used here and by the
// Gitea process pid, and every error.
func loadRun(n, conc, pid int, do func(i int) error) (loadResult, []error) {
	r := loadResult{latency: make([]time.Duration, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start, slots := make(chan struct{}), make(chan struct{}, conc)
	for i := range n {
		wg.Go(func() {
			<-start
			slots <- struct{}{}
			defer func() { <-slots }()
			t0 := time.Now()
			errs[i] = do(i)
			r.latency[i] = time.Since(t0)
		})
	}
	t0, cpu0, gitea0 := time.Now(), processCPU(), giteaCPU(pid)
	close(start)
	wg.Wait()
	r.wall, r.cpu, r.gitea = time.Since(t0), processCPU()-cpu0, giteaCPU(pid)-gitea0
	return r, slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// interleave calls each of series with i, for i in [0, n), one call at a
// time and each series in turn, starting with another series for every i;
// after, untimed, checks the answer of series s to i. It returns the
// latencies of each series, and the first error.
func interleave(n int, series []func(i int) error, after func(s, i int) error) ([]loadResult, error) {
	rs := make([]loadResult, len(series))
	for i := range n {
		for k := range series {
			s := (i + k) % len(series)
			t0 := time.Now()
			err := series[s](i)
			rs[s].latency = append(rs[s].latency, time.Since(t0))
			if err == nil {
				err = after(s, i)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return rs, nil
}

// TestE2EHTTPLoad sends 200 concurrent tools/call requests over HTTP, in one
// 2025-11-25 session and in the stateless 2026-07-28 form, to a server in
// this process (so -race covers the transport). Each answer must carry the id
// of its request and the envelope of the repository that request asked for,
// and every id must be answered once. It logs throughput, latency and the
// CPU time per request of this process and of Gitea (whose ratio is what the
// throughput ratio would be were the cores the only limit: on a shared
// machine the wall-clock figures swing by tens of percent) next to the same calls served in process by
// a session (stdio's path without its pipe, so the difference is the HTTP
// transport's) and the same GETs sent straight to Gitea (the difference is
// the server's whole cost). Answers are checked after each run, so that the
// figures time what a client waits for, not the test's own decoding.
//
// Then it sends the calls one at a time, interleaved, through every path:
// straight to Gitea, in process, over HTTP to this process and to the
// server's own program, over stdio to the program, and a bare Go HTTP round
// trip that does no work (the floor of one HTTP hop on this machine). The
// added latency of the deployed server over HTTP is to be judged against
// stdio's, both in their own process.
func TestE2EHTTPLoad(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	ts, tr := newHTTPTest(t, map[string]string{"GITEA_URL": g.URL, "GITEA_TOKEN": g.Tokens["alice"], "GITEA_MCP_PROFILE": "gitea-owner",
		"MCP_HTTP_MAX_IN_FLIGHT": fmt.Sprint(loadRequests)}) // all in flight at once: the figures compare throughput, not the bound
	targets := []loadTarget{{owner, repo, 200}, {owner, "missing-1", 404}, {owner, "missing-2", 404}, {"bob", "missing-3", 404}, {"nobody-4", repo, 404}}
	var dials atomic.Int64 // connections the test's client opened, to Gitea and to the server
	dialer := &net.Dialer{}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: loadRequests,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dialer.DialContext(ctx, network, addr)
		}}}
	defer client.CloseIdleConnections()

	direct := func(i int) error {
		tg := targets[i%len(targets)]
		req, err := http.NewRequest(http.MethodGet, g.URL+"/api/v1/repos/"+tg.owner+"/"+tg.repo, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "token "+g.Tokens["alice"])
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != tg.status {
			return fmt.Errorf("direct %s/%s: status %d, want %d", tg.owner, tg.repo, resp.StatusCode, tg.status)
		}
		return nil
	}
	sid := httpSessionID(t, ts.URL, "2025-11-25")
	local := newSession(tr.srv, func([]byte) {}) // a session served in process: stdio's path without its pipe
	local.handleRaw(t.Context(), []byte(initBody("2025-11-25")))
	// The server as deployed, in its own process: over stdio, and over HTTP.
	env := []string{"GITEA_URL=" + g.URL, "GITEA_TOKEN=" + g.Tokens["alice"], "GITEA_MCP_PROFILE=gitea-owner"}
	stdio := startClient(t, env...)
	stdio.initialize("2025-11-25")
	prog := startHTTPProgram(t, "127.0.0.1:0", env...)
	progSID := httpSessionID(t, prog.base, "2025-11-25")
	// A bare Go HTTP round trip, no work done: the floor of one HTTP hop here.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(w, r.Body) }))
	defer echo.Close()
	bare := func(int) error {
		_, _, err := mcpSend(client, echo.URL, http.MethodPost, nil, "{}")
		return err
	}
	for _, mode := range []string{"session", "stateless"} {
		t.Run(mode, func(t *testing.T) {
			answers := make([][]byte, loadRequests)
			// serve sends request i over HTTP to the server in this process
			// or in its own (via "http", "program"), over stdio ("stdio") or
			// in process ("inproc"), and keeps the answer; check reads it
			// after the run.
			serve := func(i int, via string) error {
				tg := targets[i%len(targets)]
				id := fmt.Sprintf("%s-%d", mode, i)
				params := map[string]any{"name": "gitea_call_operation",
					"arguments": map[string]any{"operation": "repoGet", "arguments": map[string]any{"owner": tg.owner, "repo": tg.repo}}}
				base, kv := ts.URL, []string{hdrSession, sid, hdrVersion, "2025-11-25"}
				if via == "program" {
					base, kv[1] = prog.base, progSID
				}
				if mode == "stateless" {
					params["_meta"] = map[string]any{metaVersion: modernVersion, metaCapabilities: map[string]any{}}
					kv = []string{hdrVersion, modernVersion, hdrMethod, "tools/call", hdrName, "gitea_call_operation"}
				}
				msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}
				switch via {
				case "inproc":
					sess := local
					if mode == "stateless" {
						sess = newSession(tr.srv, func([]byte) {})
					}
					answers[i] = sess.handleRaw(t.Context(), encode(msg))
					return nil
				case "stdio": // one at a time only
					stdio.send(string(encode(msg)))
					answers[i] = stdio.recv()
					return nil
				}
				resp, body, err := mcpSend(client, base, http.MethodPost, kv, string(encode(msg)))
				if err != nil {
					return fmt.Errorf("%s: %w", id, err)
				}
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("%s: HTTP %d: %.300s", id, resp.StatusCode, body)
				}
				answers[i] = body
				return nil
			}
			call := func(i int) error { return serve(i, "http") }
			inProcess := func(i int) error { return serve(i, "inproc") }
			answered := map[string]int{}
			check := func(i int) error {
				tg := targets[i%len(targets)]
				id, body := fmt.Sprintf("%s-%d", mode, i), answers[i]
				var r struct {
					ID     string
					Result struct{ Content []struct{ Text string } }
				}
				var env struct {
					Status  int
					Request struct{ Path string }
				}
				if err := json.Unmarshal(body, &r); err != nil || len(r.Result.Content) != 1 || json.Unmarshal([]byte(r.Result.Content[0].Text), &env) != nil {
					return fmt.Errorf("%s: bad answer %.300s", id, body)
				}
				answered[r.ID]++
				want := "/repos/" + tg.owner + "/" + tg.repo
				if r.ID != id || env.Request.Path != want || env.Status != tg.status {
					return fmt.Errorf("%s: got the answer of %s for %s (status %d), want %s (status %d)", id, r.ID, env.Request.Path, env.Status, want, tg.status)
				}
				return nil
			}
			// run sends the requests of one run through do and checks that
			// each is answered once, with its own answer.
			run := func(conc int, do func(int) error) loadResult {
				clear(answered)
				clear(answers)
				r, errs := loadRun(loadRequests, conc, g.pid, do)
				for _, err := range errs {
					t.Error(err)
				}
				for i := range loadRequests {
					if answers[i] != nil {
						if err := check(i); err != nil {
							t.Error(err)
						}
					}
					if id := fmt.Sprintf("%s-%d", mode, i); answered[id] != 1 {
						t.Errorf("%s answered %d times, want once", id, answered[id])
					}
				}
				if len(answered) != loadRequests {
					t.Errorf("%d distinct ids answered, want %d", len(answered), loadRequests)
				}
				return r
			}
			if err := errors.Join(direct(0), call(0), check(0)); err != nil { // warm up the connections and the server
				t.Fatal(err)
			}
			var got, inproc, base loadResult
			dialed := dials.Load()
			for range loadRounds { // alternating, so that a drift of Gitea's pace hits all three
				b, errs := loadRun(loadRequests, loadRequests, g.pid, direct)
				if len(errs) > 0 {
					t.Fatalf("direct Gitea: %d of %d failed, first: %v", len(errs), loadRequests, errs[0])
				}
				base.add(b)
				inproc.add(run(loadRequests, inProcess))
				got.add(run(loadRequests, call))
			}
			load, _ := os.ReadFile("/proc/loadavg")
			// With the cores the only limit, throughput is inversely
			// proportional to the CPU time a request costs both processes.
			bound := float64(base.cpu+base.gitea) / float64(got.cpu+got.gitea)
			t.Logf("%s, %d at a time, %d rounds, load average %.14s:\n"+
				"  tools/call over HTTP %v\n  tools/call in process %v\n  the same GETs straight to Gitea %v\n"+
				"  HTTP against Gitea: added p50 %v, p99 %v, throughput %.2fx (%.2fx were the CPU the only limit); in process against Gitea: added p50 %v, throughput %.2fx; "+
				"HTTP against in process: added p50 %v, CPU %v/req; connections opened by the client %d",
				mode, loadRequests, loadRounds, load, got, inproc, base,
				got.percentile(50)-base.percentile(50), got.percentile(99)-base.percentile(99), base.wall.Seconds()/got.wall.Seconds(), bound,
				inproc.percentile(50)-base.percentile(50), base.wall.Seconds()/inproc.wall.Seconds(),
				got.percentile(50)-inproc.percentile(50), got.perReq(got.cpu-inproc.cpu), dials.Load()-dialed)

			// One call at a time, each series in turn for every i, so that
			// a drift of Gitea's pace or of the machine's load hits them
			// alike: the latency a single agent waits for.
			names := []string{"straight to Gitea", "in process", "over HTTP, server in this process", "over HTTP, server in its own process"}
			series := []func(int) error{direct, inProcess, call, func(i int) error { return serve(i, "program") }}
			if mode == "session" { // stdio has no stateless form
				names = append(names, "over stdio, server in its own process", "bare Go HTTP round trip (no work, no Gitea)")
				series = append(series, func(i int) error { return serve(i, "stdio") }, bare)
			}
			one, err := interleave(loadRequests, series, func(s, i int) error {
				if s == 0 || names[s] == "bare Go HTTP round trip (no work, no Gitea)" {
					return nil
				}
				defer func() { answers[i] = nil }()
				return check(i)
			})
			if err != nil {
				t.Fatal(err)
			}
			load, _ = os.ReadFile("/proc/loadavg")
			report := fmt.Sprintf("%s, one call at a time, %d each, load average %.14s; p50 and p99, and added to straight to Gitea:", mode, loadRequests, load)
			for s, r := range one {
				report += fmt.Sprintf("\n  %-44s p50 %8v p99 %8v", names[s], r.percentile(50), r.percentile(99))
				if s > 0 && s < 5 {
					report += fmt.Sprintf("   added p50 %v, p99 %v", r.percentile(50)-one[0].percentile(50), r.percentile(99)-one[0].percentile(99))
				}
			}
			t.Log(report)
		})
	}
}
