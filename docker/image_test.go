package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/moby/moby/api/types/build"
	"github.com/moby/moby/client"

	"github.com/ringleader-dev/ringleader/internal/dockertest"
)

// TestARebuildLeavesAnotherTagsImage: a tag is rebuilt while the image it
// named is also another tag's, as when ringleader-node:chaos-test,
// ringleader-node:dev and ringleader-node:cmd-test are built from one tree
// (one image) and one of them is rebuilt. The other tag's image must stay.
// It did not: the rebuild removed the old image by ID, the engine deleted
// it with its last tag, and a `ringleader run` about to start its cluster
// from that tag found no image and never started a container (the
// "has only [] after 30 s" of TestNothingOutlivesARun/closed_pipe).
func TestARebuildLeavesAnotherTagsImage(t *testing.T) {
	dockertest.Parallel(t)
	if buildErr != nil {
		t.Fatalf("building %s: %v", testImage, buildErr)
	}
	ctx := context.Background()
	cli, err := newClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	rebuilt := fmt.Sprintf("ringleader-node:chaos-test-rebuilt-%d", os.Getpid())
	other := fmt.Sprintf("ringleader-node:chaos-test-other-%d", os.Getpid())
	// An image that is not the node image, named by both tags.
	df := t.TempDir() + "/Dockerfile"
	if err := os.WriteFile(df, []byte(fmt.Sprintf("FROM %s\nLABEL org.ringleader.test=%d\n", testImage, os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := tarFiles(map[string]string{"Dockerfile": df})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cli.ImageBuild(ctx, tr, client.ImageBuildOptions{Tags: []string{rebuilt, other}, Labels: map[string]string{LabelProject: Project}, Remove: true, Version: build.BuilderV1})
	if err != nil {
		t.Fatal(err)
	}
	err = readBuildStream(res.Body, io.Discard)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, tag := range []string{rebuilt, other} {
			cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{})
		}
	})
	shared, err := cli.ImageInspect(ctx, other)
	if err != nil {
		t.Fatal(err)
	}

	if err := BuildImage(ctx, rebuilt, nil); err != nil {
		t.Fatal(err)
	}
	if now, err := cli.ImageInspect(ctx, rebuilt); err != nil || now.ID == shared.ID {
		t.Fatalf("%s after the rebuild: %v, %v; want the node image", rebuilt, now.ID, err)
	}
	if still, err := cli.ImageInspect(ctx, other); err != nil || still.ID != shared.ID {
		t.Errorf("%s after %s was rebuilt: %v (%v); want the image it named, %s", other, rebuilt, still.ID, err, shared.ID)
	}
}
