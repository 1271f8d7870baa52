package cuda

import (
	"errors"
	"fmt"
)

// Result is a CUresult, the driver API's status code. A non-zero Result is
// an error; the sentinels below compare with errors.Is:
//
//	if errors.Is(err, cuda.ErrOutOfMemory) { … }
type Result int32

// CUresult values Minfer names (cuda.h).
const (
	ErrInvalidValue      Result = 1
	ErrOutOfMemory       Result = 2
	ErrNotInitialized    Result = 3
	ErrDeinitialized     Result = 4
	ErrNoDevice          Result = 100
	ErrInvalidDevice     Result = 101
	ErrInvalidPTX        Result = 218
	ErrUnsupportedPTX    Result = 222
	ErrInvalidImage      Result = 200
	ErrInvalidContext    Result = 201
	ErrNotFound          Result = 500
	ErrNotReady          Result = 600
	ErrIllegalAddress    Result = 700
	ErrLaunchOutOfRes    Result = 701
	ErrLaunchFailed      Result = 719
	ErrNotSupported      Result = 801
	ErrStreamCapture     Result = 900
	ErrInsufficientDrv   Result = 35
	ErrSystemDrvMismatch Result = 803
	ErrUnknown           Result = 999
)

var resultNames = map[Result]string{
	ErrInvalidValue: "CUDA_ERROR_INVALID_VALUE", ErrOutOfMemory: "CUDA_ERROR_OUT_OF_MEMORY",
	ErrNotInitialized: "CUDA_ERROR_NOT_INITIALIZED", ErrDeinitialized: "CUDA_ERROR_DEINITIALIZED",
	ErrNoDevice: "CUDA_ERROR_NO_DEVICE", ErrInvalidDevice: "CUDA_ERROR_INVALID_DEVICE",
	ErrInvalidPTX: "CUDA_ERROR_INVALID_PTX", ErrUnsupportedPTX: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrInvalidImage: "CUDA_ERROR_INVALID_IMAGE", ErrInvalidContext: "CUDA_ERROR_INVALID_CONTEXT",
	ErrNotFound: "CUDA_ERROR_NOT_FOUND", ErrNotReady: "CUDA_ERROR_NOT_READY",
	ErrIllegalAddress: "CUDA_ERROR_ILLEGAL_ADDRESS", ErrLaunchOutOfRes: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	ErrLaunchFailed: "CUDA_ERROR_LAUNCH_FAILED", ErrNotSupported: "CUDA_ERROR_NOT_SUPPORTED",
	ErrStreamCapture: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", ErrInsufficientDrv: "CUDA_ERROR_INSUFFICIENT_DRIVER",
	ErrSystemDrvMismatch: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", ErrUnknown: "CUDA_ERROR_UNKNOWN",
}

func (r Result) Error() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	return fmt.Sprintf("CUresult %d", int32(r))
}

// CallError is a failed driver call: which call, and its Result (errors.Is
// matches the Result sentinels).
type CallError struct {
	Call   string
	Result Result
}

func (e *CallError) Error() string { return fmt.Sprintf("cuda: %s: %v", e.Call, e.Result) }
func (e *CallError) Unwrap() error { return e.Result }

// ErrNoDriver: the CUDA driver library is not on this machine (or lacks a
// call Minfer needs). Wrapped with the loader's reason.
var ErrNoDriver = errors.New("cuda: no CUDA driver")

// ErrClosed: the backend was used after Close.
var ErrClosed = errors.New("cuda: backend closed")

func check(call string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	return &CallError{Call: call, Result: Result(int32(r))}
}
