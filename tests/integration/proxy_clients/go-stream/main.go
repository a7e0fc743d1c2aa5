// A plain user program on Go's net/http (its defaults: HTTPS_PROXY and SSL_CERT_FILE from the
// environment, no retries of its own), built by test_agents.py as a static binary (CGO_ENABLED=0)
// and run as `curlretry -- go-stream`: it streams a Messages request and prints the status and the
// streamed text, as an SDK user's program prints it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
)

const body = `{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,` +
	`"messages":[{"role":"user","content":"Say hello"}]}`

func main() {
	req, err := http.NewRequest("POST", "https://api.anthropic.com/v1/messages", bytes.NewBufferString(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "sk-ant-test-not-a-key")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	fmt.Println(resp.StatusCode)
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		var event struct {
			Type  string `json:"type"`
			Delta struct {
				Text string `json:"text"`
			} `json:"delta"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(data), &event) != nil {
			continue
		}
		switch event.Type {
		case "content_block_delta":
			fmt.Print(event.Delta.Text)
		case "error":
			fmt.Print("error: " + event.Error.Type)
		}
	}
	fmt.Println()
	if lines.Err() != nil {
		fmt.Fprintln(os.Stderr, lines.Err())
		os.Exit(1)
	}
}
