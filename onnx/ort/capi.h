// The part of ONNX Runtime's C API (include/onnxruntime/core/session/
// onnxruntime_c_api.h) that rxeq uses, declared by hand: the opaque
// handles, the few enums it passes, and a typed prefix of struct OrtApi.
//
// OrtApi is a table of function pointers that ONNX Runtime only ever
// extends at its end ("the struct only grows"), so a prefix that declares
// the functions rxeq calls at their positions, and pads the others, is the
// same table for every library version that serves the requested API
// version. Each used field is checked against its position with
// _Static_assert in capi.c; the positions are those of the upstream
// header (index 0 is CreateStatus).

#ifndef RXEQ_ORT_CAPI_H
#define RXEQ_ORT_CAPI_H

#include <stddef.h>
#include <stdint.h>

// The API version rxeq requests from OrtApiBase.GetApi: ONNX Runtime 1.17's.
// A library older than that returns NULL and is refused.
#define RXORT_API_VERSION 17

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtMemoryInfo OrtMemoryInfo;

// OrtLoggingLevel.
enum { RXORT_LOG_VERBOSE = 0, RXORT_LOG_INFO, RXORT_LOG_WARNING, RXORT_LOG_ERROR, RXORT_LOG_FATAL };

// GraphOptimizationLevel.
enum { RXORT_DISABLE_ALL = 0, RXORT_ENABLE_BASIC = 1, RXORT_ENABLE_EXTENDED = 2, RXORT_ENABLE_ALL = 99 };

// ONNXTensorElementDataType values rxeq passes.
enum { RXORT_FLOAT = 1, RXORT_INT64 = 7 };

typedef void (*RxOrtLoggingFunction)(void *param, int severity, const char *category, const char *logid,
                                     const char *code_location, const char *message);

#define RXORT_PAD(from, to) void *pad_##from##_##to[(to) - (from) + 1]

typedef struct RxOrtApi {
	void *CreateStatus;                                                  // 0
	int (*GetErrorCode)(const OrtStatus *);                              // 1
	const char *(*GetErrorMessage)(const OrtStatus *);                   // 2
	void *CreateEnv;                                                     // 3
	OrtStatus *(*CreateEnvWithCustomLogger)(RxOrtLoggingFunction f, void *param, int severity, const char *logid,
	                                        OrtEnv **out);                // 4
	void *EnableTelemetryEvents;                                         // 5
	OrtStatus *(*DisableTelemetryEvents)(const OrtEnv *env);             // 6
	void *CreateSession;                                                 // 7
	OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *data, size_t len,
	                                     const OrtSessionOptions *opts, OrtSession **out); // 8
	OrtStatus *(*Run)(OrtSession *s, const OrtRunOptions *ro, const char *const *in_names,
	                  const OrtValue *const *inputs, size_t n_in, const char *const *out_names, size_t n_out,
	                  OrtValue **outputs);                                // 9
	OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **out);         // 10
	RXORT_PAD(11, 12);
	OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *o, int mode); // 13
	RXORT_PAD(14, 21);
	OrtStatus *(*SetSessionLogSeverityLevel)(OrtSessionOptions *o, int level);      // 22
	OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *o, int level); // 23
	OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *o, int n);                 // 24
	OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *o, int n);                 // 25
	RXORT_PAD(26, 29);
	OrtStatus *(*SessionGetInputCount)(const OrtSession *s, size_t *out);  // 30
	OrtStatus *(*SessionGetOutputCount)(const OrtSession *s, size_t *out); // 31
	RXORT_PAD(32, 38);
	OrtStatus *(*CreateRunOptions)(OrtRunOptions **out); // 39
	RXORT_PAD(40, 45);
	OrtStatus *(*RunOptionsSetTerminate)(OrtRunOptions *o); // 46
	RXORT_PAD(47, 48);
	OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *data, size_t len,
	                                             const int64_t *shape, size_t rank, int type,
	                                             OrtValue **out); // 49
	RXORT_PAD(50, 68);
	OrtStatus *(*CreateCpuMemoryInfo)(int alloc_type, int mem_type, OrtMemoryInfo **out); // 69
	RXORT_PAD(70, 91);
	void (*ReleaseEnv)(OrtEnv *);                       // 92
	void (*ReleaseStatus)(OrtStatus *);                 // 93
	void (*ReleaseMemoryInfo)(OrtMemoryInfo *);         // 94
	void (*ReleaseSession)(OrtSession *);               // 95
	void (*ReleaseValue)(OrtValue *);                   // 96
	void (*ReleaseRunOptions)(OrtRunOptions *);         // 97
	RXORT_PAD(98, 99);
	void (*ReleaseSessionOptions)(OrtSessionOptions *); // 100
	RXORT_PAD(101, 129);
	OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *o, const char *key, const char *value); // 130
} RxOrtApi;

// rxort_lib is one loaded library: its dlopen handle, its API table, its
// version string and the process's OrtEnv and CPU memory info.
typedef struct rxort_lib {
	void *handle;
	const RxOrtApi *api;
	const char *version;
	OrtEnv *env;
	OrtMemoryInfo *cpu;
} rxort_lib;

// rxort_status is a failed call's code and message, copied out of the
// OrtStatus (which is released), or of dlerror. code 0 with msg NULL is
// success; the message is malloc'd and freed by the caller.
typedef struct rxort_status {
	int code;
	char *msg;
} rxort_status;

// rxort_open loads the library at path (RTLD_NOW|RTLD_LOCAL), gets
// OrtApi RXORT_API_VERSION and creates the OrtEnv with rxeq's logger at
// log_severity. On failure everything acquired is released.
rxort_status rxort_open(const char *path, int log_severity, rxort_lib *out);

// rxort_session creates a session of the model's bytes: one intra-op and
// one inter-op thread, sequential execution, no spinning, the graph
// optimization level given.
rxort_status rxort_session(const rxort_lib *lib, const void *model, size_t len, int opt_level,
                           OrtSession **out, size_t *n_in, size_t *n_out);

void rxort_release_session(const rxort_lib *lib, OrtSession *s);

// rxort_tensor is one input or output: element type, rank, dims and data
// (owned by the caller; bytes may be 0).
typedef struct rxort_tensor {
	int type;
	size_t rank;
	const int64_t *dims;
	void *data;
	size_t bytes;
} rxort_tensor;

// rxort_run runs s on inputs, writing its outputs into the caller's
// buffers: every OrtValue is created over the caller's memory and
// released before it returns. ro may be NULL.
rxort_status rxort_run(const rxort_lib *lib, OrtSession *s, OrtRunOptions *ro, const char *const *in_names,
                       const rxort_tensor *in, size_t n_in, const char *const *out_names, const rxort_tensor *out,
                       size_t n_out);

rxort_status rxort_run_options(const rxort_lib *lib, OrtRunOptions **out);
void rxort_terminate(const rxort_lib *lib, OrtRunOptions *ro);
void rxort_release_run_options(const rxort_lib *lib, OrtRunOptions *ro);

// rxortLog is the Go function ORT's logging is routed to (log.go).
extern void rxortLog(int severity, char *category, char *message);

#endif
