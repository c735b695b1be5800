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

	"github.com/ringleader-dev/ringleader/chaos"
	"github.com/ringleader-dev/ringleader/program"
)

// programDir is where a program's executable lives in its node image.
const programDir = "/program"

// buildProgramImage builds the node image for a run whose nodes host a
// program (chaos.ClusterSpec.Program), and returns its tag and the
// command line the nodes run (RINGLEADER_PROGRAM). Without a runtime
// image the program is one static executable, added to base (the
// FROM-scratch node image) at /program/NAME. With one (an interpreter's),
// the node is added to that image instead, with the program's files (the
// arguments that name files here) at /program/. The tag is base's with
// -program- and a digest of what went in, so an unchanged program is
// built once.
func buildProgramImage(ctx context.Context, cli client.APIClient, base string, spec chaos.ClusterSpec, progress io.Writer) (string, string, error) {
	argv := spec.Program
	files := map[string]string{} // context path → file here
	var df strings.Builder
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00", base, spec.ProgramImage, argv)
	line := slices.Clone(argv)
	if spec.ProgramImage == "" {
		path, err := program.CheckStatic(argv)
		if err != nil {
			return "", "", fmt.Errorf("docker: cluster.program: %w", err)
		}
		name := filepath.Base(path)
		files["program/"+name] = path
		line[0] = programDir + "/" + name
		fmt.Fprintf(&df, "FROM %s\nLABEL %s=%s\nCOPY program/ %s/\n", base, LabelProject, Project, programDir)
	} else {
		for i, a := range argv[1:] {
			if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() {
				name := filepath.Base(a)
				files["program/"+name] = a
				line[i+1] = programDir + "/" + name
			}
		}
		// The node, its state directory and its entrypoint come from
		// the node image; the runtime from the image named.
		fmt.Fprintf(&df, "FROM %s AS node\nFROM %s\nLABEL %s=%s\n", base, spec.ProgramImage, LabelProject, Project)
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
			return "", "", fmt.Errorf("docker: cluster.program: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", k, len(b))
		h.Write(b)
	}
	tag := base + "-program-" + hex.EncodeToString(h.Sum(nil)[:6])
	cmdline := strings.Join(line, " ")
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
	dfPath := filepath.Join(tmp, "Dockerfile")
	if err := os.WriteFile(dfPath, []byte(df.String()), 0o644); err != nil {
		return "", "", err
	}
	files["Dockerfile"] = dfPath
	ctxTar, err := tarFiles(files)
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
