// Package all registers every election algorithm; import it for its side
// effect where the registry must be complete (the CLI, the node, the tests
// that run every algorithm).
package all

import (
// Each algorithm package registers itself in init. Add new ones here.
)
