module github.com/rtload/rtload/bench

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/google/go-cmp v0.7.0
	github.com/rtload/rtload v0.0.0
	go.yaml.in/yaml/v3 v3.0.6
	gonum.org/v1/gonum v0.16.0
)

require (
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b // indirect
	github.com/mdlayher/socket v0.8.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/rtload/rtload => ../
