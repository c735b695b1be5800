package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/program"
)

// programDir is where a program's executable lives in its node image.
const programDir = "/program"

// buildProgramImage builds the node image for a run whose nodes host a
// program (chaos.ClusterSpec.Program): base, the node image, with the
// program's static executable added at /program/NAME. Its tag is base's
// with -program- and a digest of the executable, so a rebuilt program gets
// its own image and an unchanged one is built once. It returns the tag and
// the command line the nodes run (RINGLEADER_PROGRAM).
func buildProgramImage(ctx context.Context, cli client.APIClient, base string, argv []string, progress io.Writer) (string, string, error) {
	path, err := program.CheckStatic(argv)
	if err != nil {
		return "", "", fmt.Errorf("docker: cluster.program: %w", err)
	}
	exe, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("docker: cluster.program: %w", err)
	}
	sum := sha256.Sum256(exe)
	tag := base + "-program-" + hex.EncodeToString(sum[:6])
	name := filepath.Base(path)
	cmdline := strings.Join(append([]string{programDir + "/" + name}, argv[1:]...), " ")
	if ok, err := imageExists(ctx, cli, tag); err != nil {
		return "", "", fmt.Errorf("docker: inspect image %s: %w", tag, err)
	} else if ok {
		return tag, cmdline, nil
	}
	tmp, err := newBuildDir()
	if err != nil {
		return "", "", fmt.Errorf("docker: build context: %w", err)
	}
	defer os.RemoveAll(tmp)
	df := filepath.Join(tmp, "Dockerfile")
	text := fmt.Sprintf("FROM %s\nLABEL %s=%s\nCOPY program %s/%s\n", base, LabelProject, Project, programDir, name)
	if err := os.WriteFile(df, []byte(text), 0o644); err != nil {
		return "", "", err
	}
	ctxTar, err := tarFiles(map[string]string{"Dockerfile": df, "program": path})
	if err != nil {
		return "", "", fmt.Errorf("docker: build context: %w", err)
	}
	res, err := cli.ImageBuild(ctx, ctxTar, client.ImageBuildOptions{
		Tags: []string{tag}, Dockerfile: "Dockerfile", Labels: map[string]string{LabelProject: Project},
		Remove: true, ForceRemove: true, Version: build.BuilderV1,
	})
	if err != nil {
		return "", "", fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body, progress); err != nil {
		return "", "", fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	return tag, cmdline, nil
}
