package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/system"
)

// LabelSystemSource is the label of a system image ringleader built: a
// hash of everything it was built from, so an unchanged source is not
// built again.
const LabelSystemSource = "org.ringleader.system.source"

var (
	systemBuildMu sync.Mutex
	systemBuilt   = map[string]error{} // by image tag, within this process
)

// BuildSystemImage makes sure the image of sys exists: a system with a
// build section is built from source into a FROM-scratch image (the
// static binary, its data directory owned by its user), unless the engine
// holds an image of that tag built from the same source already; a system
// without one names an image that must exist. progress gets what happens.
func BuildSystemImage(ctx context.Context, sys *system.System, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	systemBuildMu.Lock()
	defer systemBuildMu.Unlock()
	if err, done := systemBuilt[sys.Image]; done {
		return err
	}
	err := buildSystemImage(ctx, sys, progress)
	if ctx.Err() == nil {
		systemBuilt[sys.Image] = err
	}
	return err
}

func buildSystemImage(ctx context.Context, sys *system.System, progress io.Writer) error {
	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if sys.Build == nil {
		if ok, err := imageExists(ctx, cli, sys.Image); err != nil {
			return fmt.Errorf("docker: system %s: inspect image %s: %w", sys.Name, sys.Image, err)
		} else if !ok {
			return fmt.Errorf("docker: system %s: image %s not found on the engine; build or load it first (docs/systems.md), nothing is pulled", sys.Name, sys.Image)
		}
		return nil
	}
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	source, err := systemSource(root, sys)
	if err != nil {
		return fmt.Errorf("docker: system %s: %w", sys.Name, err)
	}
	var before string
	if old, err := cli.ImageInspect(ctx, sys.Image); err == nil {
		before = old.ID
		if old.Config != nil && old.Config.Labels[LabelSystemSource] == source {
			fmt.Fprintf(progress, "docker: image %s is built from this source already\n", sys.Image)
			return nil
		}
	}
	start := time.Now()
	tmp, err := newBuildDir()
	if err != nil {
		return fmt.Errorf("docker: build context: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "server")
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", bin}
	dir := root
	if sys.Build.Module != "" {
		dir = filepath.Join(root, filepath.FromSlash(sys.Build.Module))
		args = append(args, ".")
	} else {
		args = append(args, sys.Build.Package)
	}
	gobuild := exec.CommandContext(ctx, "go", args...)
	gobuild.Dir = dir
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOWORK=off", "GOTMPDIR="+tmp)
	dieWithParent(gobuild)
	fmt.Fprintf(progress, "docker: building %s %s (go %s in %s; etcd takes about two minutes the first time)\n", sys.Name, sys.Version, strings.Join(args, " "), dir)
	if out, err := gobuild.CombinedOutput(); err != nil {
		return fmt.Errorf("docker: system %s: go build in %s: %w\n%s", sys.Name, dir, err, out)
	}
	fmt.Fprintf(progress, "docker: built %s in %v\n", sys.Build.Binary, time.Since(start).Round(time.Millisecond))
	ctxTar, err := systemContext(sys, bin)
	if err != nil {
		return fmt.Errorf("docker: system %s: build context: %w", sys.Name, err)
	}
	res, err := cli.ImageBuild(ctx, ctxTar, client.ImageBuildOptions{
		Tags:        []string{sys.Image},
		Dockerfile:  "Dockerfile",
		Labels:      map[string]string{LabelProject: Project, LabelSystemSource: source},
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("docker: build image %s: %w", sys.Image, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body, progress); err != nil {
		return fmt.Errorf("docker: build image %s: %w", sys.Image, err)
	}
	fmt.Fprintf(progress, "docker: image %s ready in %v\n", sys.Image, time.Since(start).Round(time.Millisecond))
	removeReplaced(ctx, cli, sys.Image, before, client.ImageRemoveOptions{}, progress)
	return nil
}

// systemSource hashes what a system image is built from: the system's
// build, user and data directory, and the module's go.mod, go.sum and Go
// files (for a package of ringleader's module, its go.mod and go.sum, which
// pin the package's version).
func systemSource(root string, sys *system.System) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", sys.Version, sys.Build.Module, sys.Build.Package, sys.Build.Binary, sys.User, sys.DataDir)
	var files []string
	if sys.Build.Module != "" {
		dir := filepath.Join(root, filepath.FromSlash(sys.Build.Module))
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".go") || d.Name() == "go.mod" || d.Name() == "go.sum") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	} else {
		files = []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// systemContext is the build context of a system image: its Dockerfile,
// the binary, and the data directory owned by the server's user (a
// volume starts as a copy of it, ownership included).
func systemContext(sys *system.System, bin string) (io.Reader, error) {
	var df strings.Builder
	fmt.Fprintf(&df, "FROM scratch\nLABEL %s=%s\nCOPY server %s\n", LabelProject, Project, sys.Build.Binary)
	if sys.DataDir != "" {
		fmt.Fprintf(&df, "COPY --chown=%s data/ %s/\n", sys.User, sys.DataDir)
	}
	fmt.Fprintf(&df, "USER %s\nENTRYPOINT [%q]\n", sys.User, sys.Build.Binary)
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, f := range []struct {
		name string
		mode int64
		body []byte
		dir  bool
	}{
		{"Dockerfile", 0o644, []byte(df.String()), false},
		{"server", 0o755, b, false},
		{"data/", 0o700, nil, true},
		{"data/.ringleader", 0o600, []byte("the server's data directory\n"), false},
	} {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: now, Typeflag: tar.TypeReg}
		if f.dir {
			hdr.Typeflag, hdr.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	return &buf, tw.Close()
}
