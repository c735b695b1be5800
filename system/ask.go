package system

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client is an HTTP client for the probe: straight to the member (no
// proxy from the environment), one kept-alive connection per member,
// each answer bounded by the probe's timeout.
func (p Probe) Client() (*http.Client, *http.Transport) {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: time.Duration(p.Timeout)}).DialContext,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: time.Duration(p.Timeout)}, tr
}

// Ask sends one probe to the member at ip and returns the answer's body,
// at most MaxAnswer+1 bytes (Read refuses a longer one as oversized); an
// answer other than 200 OK is an error quoting it.
func (p Probe) Ask(ctx context.Context, hc *http.Client, ip string) ([]byte, error) {
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(p.Port)) + p.Path
	var body io.Reader
	if p.Method == http.MethodPost {
		body = strings.NewReader(p.Body)
	}
	req, err := http.NewRequestWithContext(ctx, p.Method, url, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxAnswer+1))
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, Quote(b))
	}
	return b, nil
}
