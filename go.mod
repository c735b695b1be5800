module github.com/ringleader-dev/ringleader

go 1.26.8
