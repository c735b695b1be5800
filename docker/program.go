package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/program"
)

// programDir is where a program's executable lives in its node image.
const programDir = "/program"

// programLayout is where a program goes in its node image: the files
// copied to /program/ (build-context path → file here) and the command
// line the node runs there. Without a runtime image the program is one
// static executable (program.CheckStatic), at /program/NAME. With one (an
// interpreter's), the arguments that name regular files here are copied
// to /program/ and named there; the rest is left as it is.
func programLayout(argv []string, runtime string) ([]string, map[string]string, error) {
	files := map[string]string{}
	line := slices.Clone(argv)
	if runtime == "" {
		path, err := program.CheckStatic(argv)
		if err != nil {
			return nil, nil, err
		}
		name := filepath.Base(path)
		files["program/"+name] = path
		line[0] = programDir + "/" + name
		return line, files, nil
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, nil, fmt.Errorf("no command")
	}
	for i, a := range argv[1:] {
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() {
			name := filepath.Base(a)
			files["program/"+name] = a
			line[i+1] = programDir + "/" + name
		}
	}
	return line, files, nil
}

// ProgramCommand is the command line a program's nodes run in its node
// image (RINGLEADER_PROGRAM): argv with its files at /program/. It
// checks what building the image would, without Docker: a program
// without a runtime image must be a static executable.
func ProgramCommand(argv []string, runtime string) (string, error) {
	line, _, err := programLayout(argv, runtime)
	if err != nil {
		return "", err
	}
	return strings.Join(line, " "), nil
}

// ProgramImage is a node image that hosts a program, made on its own
// (`ringleader image`, which `make up` runs for PROGRAM=) rather than by
// Start for a run.
type ProgramImage struct {
	// Node is the node image it is made from (DefaultImage when empty).
	Node string
	// BuildNode builds Node from this source tree first (BuildImage).
	BuildNode bool
	// Command is the program's command line here; Runtime the image
	// that holds its runtime (empty: a static executable).
	Command []string
	Runtime string
	// Labels are set on the image beside the project's: the compose
	// cluster's carries org.ringleader.run=compose, so `make down` finds
	// it.
	Labels map[string]string
}

// Build checks the program (ProgramCommand) and the runtime image before
// anything is built, builds the node image when asked, then the
// program's image, exactly as Start does for a run; it returns the
// image's tag and the command line its nodes run (RINGLEADER_PROGRAM).
func (p ProgramImage) Build(ctx context.Context, progress io.Writer) (string, string, error) {
	if p.Node == "" {
		p.Node = DefaultImage
	}
	if _, err := ProgramCommand(p.Command, p.Runtime); err != nil {
		return "", "", fmt.Errorf("docker: program %s: %w", strings.Join(p.Command, " "), err)
	}
	cli, err := newClient(ctx)
	if err != nil {
		return "", "", err
	}
	defer cli.Close()
	if p.Runtime != "" {
		if _, err := imageID(ctx, cli, p.Runtime); err != nil {
			return "", "", err
		}
	}
	if p.BuildNode {
		if err := BuildImage(ctx, p.Node, progress); err != nil {
			return "", "", err
		}
	}
	return buildProgramImage(ctx, cli, p.Node, p.Command, p.Runtime, p.Labels, progress)
}

// labelBuiltFrom, on a program's node image, holds the IDs of the images
// it was built from (the node image, and the runtime image if any): a
// tag whose label no longer matches them is stale and built again.
const labelBuiltFrom = "org.ringleader.built-from"

// buildProgramImage builds the node image for nodes that host the program
// argv, and returns its tag and the command line the nodes run
// (RINGLEADER_PROGRAM). Without a runtime image the program is one static
// executable, added to base (the FROM-scratch node image) at
// /program/NAME. With one (an interpreter's), the node is added to that
// image instead, with the program's files at /program/ (programLayout).
// The tag is base's with -program- and a digest of what was asked for —
// the two images' names, the command line in the image, the files and
// the labels — so one program keeps one tag. It is built once while the images it is built
// from stay as they are (labelBuiltFrom); a rebuilt node image builds it
// again, and the image the tag named before is removed.
func buildProgramImage(ctx context.Context, cli client.APIClient, base string, argv []string, runtime string, labels map[string]string, progress io.Writer) (string, string, error) {
	if progress == nil {
		progress = io.Discard
	}
	line, files, err := programLayout(argv, runtime)
	if err != nil {
		return "", "", fmt.Errorf("docker: program %s: %w", strings.Join(argv, " "), err)
	}
	var from []string
	for _, img := range []string{base, runtime} {
		if img == "" {
			continue
		}
		id, err := imageID(ctx, cli, img)
		if err != nil {
			return "", "", err
		}
		from = append(from, id)
	}
	builtFrom := strings.Join(from, ",")
	// The command as it runs in the image, not as given here: the same
	// program from another directory is the same image.
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00", base, runtime, line)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(h, "%s=%s\x00", k, labels[k])
	}
	var df strings.Builder
	if runtime == "" {
		fmt.Fprintf(&df, "FROM %s\nLABEL %s=%s\nCOPY program/ %s/\n", base, LabelProject, Project, programDir)
	} else {
		// The node, its state directory and its entrypoint come from
		// the node image; the runtime from the image named.
		fmt.Fprintf(&df, "FROM %s AS node\nFROM %s\nLABEL %s=%s\n", base, runtime, LabelProject, Project)
		df.WriteString("ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n")
		df.WriteString("COPY --from=node /ringleader /ringleader\n")
		df.WriteString("COPY --from=node --chown=65532:65532 /var/lib/ringleader/ /var/lib/ringleader/\n")
		if len(files) > 0 {
			fmt.Fprintf(&df, "COPY program/ %s/\n", programDir)
		}
		df.WriteString("USER 65532:65532\nVOLUME /var/lib/ringleader\nENTRYPOINT [\"/ringleader\", \"node\"]\n")
	}
	for _, k := range slices.Sorted(maps.Keys(files)) {
		b, err := os.ReadFile(files[k])
		if err != nil {
			return "", "", fmt.Errorf("docker: program %s: %w", strings.Join(argv, " "), err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", k, len(b))
		h.Write(b)
	}
	tag := base + "-program-" + hex.EncodeToString(h.Sum(nil)[:6])
	cmdline := strings.Join(line, " ")
	var before string // the image the tag names now, stale
	switch old, err := cli.ImageInspect(ctx, tag); {
	case err == nil && old.Config != nil && old.Config.Labels[labelBuiltFrom] == builtFrom:
		return tag, cmdline, nil
	case err == nil:
		before = old.ID
	case !isNotFound(err):
		return "", "", fmt.Errorf("docker: inspect image %s: %w", tag, err)
	}
	tmp, err := newBuildDir()
	if err != nil {
		return "", "", fmt.Errorf("docker: build context: %w", err)
	}
	defer os.RemoveAll(tmp)
	dfPath := filepath.Join(tmp, "Dockerfile")
	if err := os.WriteFile(dfPath, []byte(df.String()), 0o644); err != nil {
		return "", "", err
	}
	files["Dockerfile"] = dfPath
	ctxTar, err := tarFiles(files)
	if err != nil {
		return "", "", fmt.Errorf("docker: build context: %w", err)
	}
	all := map[string]string{LabelProject: Project, labelBuiltFrom: builtFrom}
	maps.Copy(all, labels)
	res, err := cli.ImageBuild(ctx, ctxTar, client.ImageBuildOptions{
		Tags: []string{tag}, Dockerfile: "Dockerfile", Labels: all,
		Remove: true, ForceRemove: true, Version: build.BuilderV1,
	})
	if err != nil {
		return "", "", fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	defer res.Body.Close()
	if err := readBuildStream(res.Body, progress); err != nil {
		return "", "", fmt.Errorf("docker: build image %s: %w", tag, err)
	}
	// As BuildImage does: only the image this tag named, once no tag
	// names it, and not while a container uses it.
	removeReplaced(ctx, cli, tag, before, client.ImageRemoveOptions{PruneChildren: true}, progress)
	return tag, cmdline, nil
}

// imageID is the ID of the image tag names on the engine; nothing is
// pulled, so a missing image is an error that says so.
func imageID(ctx context.Context, cli client.APIClient, tag string) (string, error) {
	res, err := cli.ImageInspect(ctx, tag)
	switch {
	case isNotFound(err):
		return "", fmt.Errorf("docker: image %s not found, and nothing is pulled: build or import it first", tag)
	case err != nil:
		return "", fmt.Errorf("docker: inspect image %s: %w", tag, err)
	}
	return res.ID, nil
}
