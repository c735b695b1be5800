package docker

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"
)

// RepoRoot walks up from the working directory to the directory holding
// go.mod: the image is built from this source tree.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("docker: no go.mod in %s or any parent; run from inside the ringleader source tree or pass WithBuild(false) with a built image", dir)
		}
	}
}

var (
	buildMu    sync.Mutex
	builtTags  = map[string]error{}
	buildLocks = map[string]*sync.Mutex{}
)

// BuildImage builds the node image tag from this source tree: the static
// binary (CGO_ENABLED=0 go build -tags nodeimage -trimpath -ldflags='-s -w'
// ./cmd/ringleader: the node and netfilter subcommands only, none of the
// harness) goes to bin/node/ringleader in a temporary context next to docker/Dockerfile
// and whatever else it COPYs, and the engine's classic builder makes a
// FROM-scratch image labelled with the project (nothing is pulled). The
// temporary directory, ringleader-image-<pid>-*, goes when the build ends,
// also when ctx does; a build removes those whose process was killed. Within
// one process a tag is built once; later calls return the first result.
// progress gets the build's output (nil: discarded).
func BuildImage(ctx context.Context, tag string, progress io.Writer) error {
	buildMu.Lock()
	if err, done := builtTags[tag]; done {
		buildMu.Unlock()
		return err
	}
	l := buildLocks[tag]
	if l == nil {
		l = &sync.Mutex{}
		buildLocks[tag] = l
	}
	buildMu.Unlock()

	l.Lock()
	defer l.Unlock()
	buildMu.Lock()
	if err, done := builtTags[tag]; done {
		buildMu.Unlock()
		return err
	}
	buildMu.Unlock()

	err := buildImage(ctx, tag, progress)
	if ctx.Err() == nil { // a cancelled build may be retried
		buildMu.Lock()
		builtTags[tag] = err
		buildMu.Unlock()
	}
	return err
}

func buildImage(ctx context.Context, tag string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	start := time.Now()
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	for _, d := range removeStaleBuildDirs() {
		fmt.Fprintf(progress, "docker: removed %s, left by a build whose process is gone\n", d)
	}
	tmp, err := newBuildDir()
	if err != nil {
		return fmt.Errorf("docker: build context: %w", err)
	}
	defer os.RemoveAll(tmp)

	bin := filepath.Join(tmp, "bin", "node", "ringleader")
	gobuild := exec.CommandContext(ctx, "go", "build", "-tags", "nodeimage", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/ringleader")
	gobuild.Dir = root
	// The go command's own work directory goes inside ours, so that
	// removing ours removes what a killed go build left too.
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOTMPDIR="+tmp)
	dieWithParent(gobuild)
	if out, err := gobuild.CombinedOutput(); err != nil {
		return fmt.Errorf("docker: go build ./cmd/ringleader in %s: %w\n%s", root, err, out)
	}
	fmt.Fprintf(progress, "docker: built bin/node/ringleader in %v\n", time.Since(start).Round(time.Millisecond))

	dockerfile := filepath.Join(root, "docker", "Dockerfile")
	df, err := os.ReadFile(dockerfile)
	if err != nil {
		return fmt.Errorf("docker: the node image needs %s: %w", dockerfile, err)
	}
	files := map[string]string{"docker/Dockerfile": dockerfile, "bin/node/ringleader": bin}
	for _, src := range copySources(df) {
		if strings.HasPrefix(src, "bin/") {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(src))
		if err := addTree(files, root, p); err != nil {
			return fmt.Errorf("docker: %s COPYs %s: %w", dockerfile, src, err)
		}
	}
	ctxTar, err := tarFiles(files)
	if err != nil {
		return fmt.Errorf("docker: build context: %w", err)
	}

	cli, err := newClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	var before string // the image the tag names now, if any
	if old, err := cli.ImageInspect(ctx, tag); err == nil {
		before = old.ID
	}
	res, err := cli.ImageBuild(ctx, ctxTar, client.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  "docker/Dockerfile",
		Labels:      map[string]string{LabelProject: Project},
		Remove:      true,
		ForceRemove: true,
		Version:     build.BuilderV1,
	})
	if err != nil {
		return fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body, progress); err != nil {
		return fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	fmt.Fprintf(progress, "docker: image %s ready in %v\n", tag, time.Since(start).Round(time.Millisecond))
	// The tag moved to the new image; the one it named before may now
	// be an untagged leftover of this project, removed here. Only that
	// one: a prune of every dangling image of the project would take the
	// intermediate images of a build another process is running at the
	// same moment (the classic builder's steps are untagged until it
	// ends), and fail it.
	removeReplaced(ctx, cli, tag, before, client.ImageRemoveOptions{}, progress)
	return nil
}

// removeReplaced removes the image before, which tag named until a build
// moved it, once no tag names it. One source tree builds one image, so
// the image is often another tag's too (ringleader-node:dev,
// ringleader-node:chaos-test and ringleader-node:cmd-test built from the
// same sources are one image), and the engine, asked to remove an image by
// ID, deletes it with its one remaining tag: a rebuild of one tag took
// another's image away from under a run that was about to start from it.
// The engine itself refuses to remove an image a container uses, so a run
// still on the old image keeps it.
func removeReplaced(ctx context.Context, cli client.APIClient, tag, before string, o client.ImageRemoveOptions, progress io.Writer) {
	if before == "" {
		return
	}
	if now, err := cli.ImageInspect(ctx, tag); err != nil || now.ID == before {
		return
	}
	if old, err := cli.ImageInspect(ctx, before); err != nil || len(old.RepoTags) > 0 {
		return // gone already, or another tag's
	}
	if _, err := cli.ImageRemove(ctx, before, o); err != nil && !cerrdefs.IsConflict(err) && !cerrdefs.IsNotFound(err) {
		fmt.Fprintf(progress, "docker: removing the image %s named before: %v\n", tag, err)
	}
}

// copySources lists the source paths of the Dockerfile's COPY and ADD
// instructions (flags and the destination left out).
func copySources(df []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(df))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		if op := strings.ToUpper(f[0]); op != "COPY" && op != "ADD" {
			continue
		}
		args := f[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "--") {
			if strings.HasPrefix(args[0], "--from") {
				args = nil // copies from another stage, not the context
				break
			}
			args = args[1:]
		}
		if len(args) >= 2 {
			out = append(out, args[:len(args)-1]...)
		}
	}
	return out
}

// addTree adds the file or directory p (under root) to files by its
// context-relative slash path.
func addTree(files map[string]string, root, p string) error {
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = path
		return nil
	})
}

func tarFiles(files map[string]string) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: name, Mode: int64(st.Mode().Perm()), Size: int64(len(b)), ModTime: st.ModTime(), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(b); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// readBuildStream copies the build's output to progress and returns the
// error the builder reported, if any.
func readBuildStream(r io.Reader, progress io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if m.Error != "" {
			return errors.New(strings.TrimSpace(m.Error))
		}
		if m.Stream != "" {
			fmt.Fprint(progress, m.Stream)
		}
	}
}

// imageExists says whether the engine has tag.
func imageExists(ctx context.Context, cli client.APIClient, tag string) (bool, error) {
	_, err := cli.ImageInspect(ctx, tag)
	if err == nil {
		return true, nil
	}
	if isNotFound(err) {
		return false, nil
	}
	return false, err
}
