// Command containerfile lints Containerfiles offline with BuildKit's own
// checks: dockerfile2llb.DockerfileLint, what `docker build --check` runs
// (parse errors, undefined ARGs and variables, casing, JSON-form
// ENTRYPOINT/CMD, …; experimental checks included). Base images are not
// pulled: each resolves to an empty linux/amd64 config. Any warning or
// error exits 1.
//
//	cd deploy/check/containerfile && go run . ../../Containerfile ../../Containerfile.prebuilt
//
// A module of its own, so that rtload's go.mod does not carry BuildKit.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerui"
	digest "github.com/opencontainers/go-digest"
)

// offline resolves every base image to an empty linux/amd64 config.
type offline struct{}

func (offline) ResolveImageConfig(ctx context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg := []byte(`{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":[]}}`)
	return ref, digest.FromBytes(cfg), cfg, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: containerfile FILE...")
		os.Exit(2)
	}
	bad := 0
	for _, file := range os.Args[1:] {
		n, err := lint(file)
		if err != nil {
			fmt.Printf("%s: %v\n", file, err)
		}
		if n > 0 || err != nil {
			bad++
			continue
		}
		fmt.Printf("%s: no warnings (BuildKit's Dockerfile checks, experimental included)\n", file)
	}
	if bad > 0 {
		os.Exit(1)
	}
}

// lint prints every warning of file and returns their number, or the
// build error BuildKit found.
func lint(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	// The check directive turns the experimental checks on; it is line 0,
	// so the file's own lines keep their numbers.
	b = append([]byte("# check=experimental=all\n"), b...)
	sm := llb.NewSourceMap(nil, file, "Dockerfile", b)
	sm.Definition = &llb.Definition{} // AddSource reads it; nothing is built
	res, err := dockerfile2llb.DockerfileLint(context.Background(), b, dockerfile2llb.ConvertOpt{
		Config:       dockerui.Config{},
		SourceMap:    sm,
		MetaResolver: offline{},
	})
	if err != nil {
		return 0, err
	}
	for _, w := range res.Warnings {
		line := 0
		if len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line) - 1
		}
		fmt.Printf("%s:%d: %s: %s\n", file, line, w.RuleName, w.Detail)
	}
	if res.Error != nil {
		return len(res.Warnings), fmt.Errorf("%s", res.Error.Message)
	}
	return len(res.Warnings), nil
}
