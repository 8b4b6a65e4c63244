//go:build cgo

// The C side of the binding: every ONNX Runtime call rxeq makes, each
// OrtStatus turned into a code and a copied message, and nothing
// acquired left behind on any path.

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "capi.h"

// The positions of the declared functions in OrtApi (onnxruntime_c_api.h).
#define RXORT_AT(field, index) _Static_assert(offsetof(RxOrtApi, field) == (index) * sizeof(void *), #field)
RXORT_AT(GetErrorCode, 1);
RXORT_AT(GetErrorMessage, 2);
RXORT_AT(CreateEnvWithCustomLogger, 4);
RXORT_AT(DisableTelemetryEvents, 6);
RXORT_AT(CreateSessionFromArray, 8);
RXORT_AT(Run, 9);
RXORT_AT(CreateSessionOptions, 10);
RXORT_AT(SetSessionExecutionMode, 13);
RXORT_AT(SetSessionLogSeverityLevel, 22);
RXORT_AT(SetSessionGraphOptimizationLevel, 23);
RXORT_AT(SetIntraOpNumThreads, 24);
RXORT_AT(SetInterOpNumThreads, 25);
RXORT_AT(SessionGetInputCount, 30);
RXORT_AT(SessionGetOutputCount, 31);
RXORT_AT(CreateRunOptions, 39);
RXORT_AT(RunOptionsSetTerminate, 46);
RXORT_AT(CreateTensorWithDataAsOrtValue, 49);
RXORT_AT(CreateCpuMemoryInfo, 69);
RXORT_AT(ReleaseEnv, 92);
RXORT_AT(ReleaseStatus, 93);
RXORT_AT(ReleaseMemoryInfo, 94);
RXORT_AT(ReleaseSession, 95);
RXORT_AT(ReleaseValue, 96);
RXORT_AT(ReleaseRunOptions, 97);
RXORT_AT(ReleaseSessionOptions, 100);
RXORT_AT(AddSessionConfigEntry, 130);

// OrtApiBase, the struct OrtGetApiBase returns.
typedef struct RxOrtApiBase {
	const RxOrtApi *(*GetApi)(uint32_t version);
	const char *(*GetVersionString)(void);
} RxOrtApiBase;

// The codes rxeq gives failures that are not an OrtStatus (negative, so
// they never collide with OrtErrorCode).
enum { RXORT_E_DLOPEN = -1, RXORT_E_SYMBOL = -2, RXORT_E_API = -3, RXORT_E_NOMEM = -4 };

static rxort_status ok(void) {
	rxort_status s = {0, NULL};
	return s;
}

static rxort_status fail(int code, const char *msg) {
	rxort_status s = {code, strdup(msg ? msg : "(no message)")};
	if (s.msg == NULL) s.code = RXORT_E_NOMEM;
	return s;
}

// take copies st's code and message and releases it; NULL is success.
static rxort_status take(const RxOrtApi *api, OrtStatus *st) {
	if (st == NULL) return ok();
	rxort_status s = fail(api->GetErrorCode(st), api->GetErrorMessage(st));
	api->ReleaseStatus(st);
	return s;
}

static void logger(void *param, int severity, const char *category, const char *logid, const char *code_location,
                   const char *message) {
	(void)param;
	(void)logid;
	(void)code_location;
	rxortLog(severity, (char *)(category ? category : ""), (char *)(message ? message : ""));
}

rxort_status rxort_open(const char *path, int log_severity, rxort_lib *out) {
	memset(out, 0, sizeof *out);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return fail(RXORT_E_DLOPEN, dlerror());
	const RxOrtApiBase *(*get_base)(void) = (const RxOrtApiBase *(*)(void))dlsym(h, "OrtGetApiBase");
	if (get_base == NULL) {
		rxort_status s = fail(RXORT_E_SYMBOL, dlerror());
		dlclose(h);
		return s;
	}
	const RxOrtApiBase *base = get_base();
	const char *version = base ? base->GetVersionString() : NULL;
	const RxOrtApi *api = base ? base->GetApi(RXORT_API_VERSION) : NULL;
	if (api == NULL) {
		// The library is older than the API version rxeq asks for; the
		// caller reports the version it has.
		out->version = version;
		dlclose(h);
		return fail(RXORT_E_API, version);
	}
	OrtEnv *env = NULL;
	rxort_status s = take(api, api->CreateEnvWithCustomLogger(logger, NULL, log_severity, "rxeq", &env));
	if (s.code != 0 || s.msg != NULL) {
		dlclose(h);
		return s;
	}
	// ORT's telemetry is on by default in its Linux builds: it writes a
	// file per process (/tmp/mat-debug-PID.log) and a device id under
	// ~/.cache/Microsoft, and records events on every session. rxeq asks
	// for none of it.
	s = take(api, api->DisableTelemetryEvents(env));
	if (s.msg != NULL) {
		api->ReleaseEnv(env);
		dlclose(h);
		return s;
	}
	OrtMemoryInfo *cpu = NULL;
	// OrtDeviceAllocator (0), OrtMemTypeDefault (0).
	s = take(api, api->CreateCpuMemoryInfo(0, 0, &cpu));
	if (s.msg != NULL) {
		api->ReleaseEnv(env);
		dlclose(h);
		return s;
	}
	out->handle = h;
	out->api = api;
	out->version = version;
	out->env = env;
	out->cpu = cpu;
	return ok();
}

rxort_status rxort_session(const rxort_lib *lib, const void *model, size_t len, int opt_level, OrtSession **out,
                           size_t *n_in, size_t *n_out) {
	const RxOrtApi *api = lib->api;
	*out = NULL;
	OrtSessionOptions *o = NULL;
	rxort_status s = take(api, api->CreateSessionOptions(&o));
	if (s.msg != NULL) return s;
#define TRY(call)                               \
	do {                                        \
		s = take(api, (call));                  \
		if (s.msg != NULL) goto done;           \
	} while (0)
	TRY(api->SetIntraOpNumThreads(o, 1));
	TRY(api->SetInterOpNumThreads(o, 1));
	TRY(api->SetSessionExecutionMode(o, 0)); // ORT_SEQUENTIAL
	TRY(api->AddSessionConfigEntry(o, "session.intra_op.allow_spinning", "0"));
	TRY(api->AddSessionConfigEntry(o, "session.inter_op.allow_spinning", "0"));
	TRY(api->SetSessionLogSeverityLevel(o, RXORT_LOG_WARNING));
	TRY(api->SetSessionGraphOptimizationLevel(o, opt_level));
	TRY(api->CreateSessionFromArray(lib->env, model, len, o, out));
	s = take(api, api->SessionGetInputCount(*out, n_in));
	if (s.msg == NULL) s = take(api, api->SessionGetOutputCount(*out, n_out));
	if (s.msg != NULL) {
		api->ReleaseSession(*out);
		*out = NULL;
	}
#undef TRY
done:
	api->ReleaseSessionOptions(o);
	return s;
}

void rxort_release_session(const rxort_lib *lib, OrtSession *s) {
	if (s != NULL) lib->api->ReleaseSession(s);
}

// An empty tensor's data: ORT wants a pointer even for zero bytes.
static int64_t empty_data[1];

static rxort_status values(const rxort_lib *lib, const rxort_tensor *t, size_t n, OrtValue **v) {
	for (size_t i = 0; i < n; i++) {
		void *data = t[i].bytes ? t[i].data : (void *)empty_data;
		rxort_status s = take(lib->api, lib->api->CreateTensorWithDataAsOrtValue(
		                                    lib->cpu, data, t[i].bytes, t[i].dims, t[i].rank, t[i].type, &v[i]));
		if (s.msg != NULL) return s;
	}
	return ok();
}

rxort_status rxort_run(const rxort_lib *lib, OrtSession *s, OrtRunOptions *ro, const char *const *in_names,
                       const rxort_tensor *in, size_t n_in, const char *const *out_names, const rxort_tensor *out,
                       size_t n_out) {
	const RxOrtApi *api = lib->api;
	OrtValue *stack[32];
	OrtValue **v = stack;
	if (n_in + n_out > 32) {
		v = calloc(n_in + n_out, sizeof *v);
		if (v == NULL) return fail(RXORT_E_NOMEM, "out of memory");
	} else {
		memset(stack, 0, sizeof stack);
	}
	rxort_status st = values(lib, in, n_in, v);
	if (st.msg == NULL) st = values(lib, out, n_out, v + n_in);
	if (st.msg == NULL) {
		st = take(api, api->Run(s, ro, in_names, (const OrtValue *const *)v, n_in, out_names, n_out, v + n_in));
	}
	for (size_t i = 0; i < n_in + n_out; i++) {
		if (v[i] != NULL) api->ReleaseValue(v[i]);
	}
	if (v != stack) free(v);
	return st;
}

rxort_status rxort_run_options(const rxort_lib *lib, OrtRunOptions **out) {
	return take(lib->api, lib->api->CreateRunOptions(out));
}

void rxort_terminate(const rxort_lib *lib, OrtRunOptions *ro) {
	OrtStatus *st = lib->api->RunOptionsSetTerminate(ro);
	if (st != NULL) lib->api->ReleaseStatus(st);
}

void rxort_release_run_options(const rxort_lib *lib, OrtRunOptions *ro) {
	if (ro != NULL) lib->api->ReleaseRunOptions(ro);
}
