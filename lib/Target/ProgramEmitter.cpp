//===- ProgramEmitter.cpp - The C file that describes a compiled program -*- C++ -*-===//
// Tables of buffers and calls for the runtime, plus main() for executables or the public API for libraries.
//===----------------------------------------------------------------------===//

#include "Target/ProgramEmitter.h"

#include "IR/Infer.h"

#include <algorithm>

namespace tgc {
namespace {

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

const char *kindName(tgc_buffer_kind k) {
  switch (k) {
  case TGC_INPUT: return "TGC_INPUT";
  case TGC_WEIGHT: return "TGC_WEIGHT";
  case TGC_OUTPUT: return "TGC_OUTPUT";
  case TGC_VARIABLE: return "TGC_VARIABLE";
  default: return "TGC_TEMP";
  }
}

std::string cElemType(DType d) {
  Scalar s = d.element().scalar();
  if (s == Scalar::F16 || s == Scalar::BF16)
    return "uint16_t"; // 16-bit floats cross the C API as their bits
  return std::string(scalarCName(s));
}

/// `[N, 784]`: a buffer's shape with variable axes by name.
std::string symbolicShape(const ProgramDesc &p, const BufferDesc &b) {
  std::string s = "[";
  for (size_t d = 0; d < b.shape.size(); ++d) {
    int v = b.dimVars.empty() ? -1 : b.dimVars[d];
    s += (d ? ", " : "") + (v >= 0 ? p.buffers[size_t(v)].name : std::to_string(b.shape[d]));
  }
  return s + "]";
}

/// The device code as a byte array (OpenCL C is kept NUL-terminated for readers that print it).
std::string codeArray(const char *name, const std::string &code) {
  std::string s = "static const unsigned char " + std::string(name) + "[] __attribute__((aligned(64))) = {";
  char buf[16];
  for (size_t i = 0; i < code.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "%s%u", i % 24 == 0 ? "\n    " : "", unsigned(static_cast<unsigned char>(code[i])));
    s += buf;
    s += ",";
  }
  return s + "0};\n";
}

std::string dims32(const int d[3]) {
  return "{" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "}";
}

std::string tables(const ProgramDesc &p, const EmitOptions &o) {
  std::string s;
  bool gpu = !o.device.empty();
  for (const KernelDesc &k : p.kernels)
    if (!gpu)
      s += "extern void " + o.prefix + k.symbol + "(void *const *, int64_t, int64_t);\n";
  if (gpu)
    s += codeArray("code", o.code);
  if (!o.fallback.empty())
    s += codeArray("fallback", o.fallback);
  s += "\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDesc &b = p.buffers[i];
    if (b.kind == TGC_WEIGHT && o.embedWeights)
      s += "extern const unsigned char " + o.prefix + "weight_" + std::to_string(i) + "[];\n";
    if (!b.shape.empty()) {
      s += "static const int64_t shape" + std::to_string(i) + "[] = {";
      for (size_t d = 0; d < b.shape.size(); ++d)
        s += (d ? ", " : "") + std::to_string(b.shape[d]);
      s += "};\n";
    }
    if (!b.dimVars.empty()) {
      s += "static const int dim_vars" + std::to_string(i) + "[] = {";
      for (size_t d = 0; d < b.dimVars.size(); ++d)
        s += (d ? ", " : "") + std::to_string(b.dimVars[d]);
      s += "};\n";
    }
  }
  s += "\nstatic const tgc_buffer_info buffers[] = {\n";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDesc &b = p.buffers[i];
    std::string data = b.kind == TGC_WEIGHT && o.embedWeights ? o.prefix + "weight_" + std::to_string(i) : "0";
    s += "    {" + std::string(kindName(b.kind)) + ", " + quote(b.name) + ", " + runtimeDTypeName(b.dtype) + ", " +
         std::to_string(b.shape.size()) + ", " + (b.shape.empty() ? "0" : "shape" + std::to_string(i)) + ", " +
         std::to_string(b.bytes) + ", " + std::to_string(b.offset) + ", " + data + ", " +
         (b.dimVars.empty() ? "0" : "dim_vars" + std::to_string(i)) + ", " + std::to_string(b.varMin) + ", " +
         std::to_string(b.varMax) + "},\n";
  }
  s += "};\n\n";
  for (size_t c = 0; c < p.calls.size(); ++c) {
    s += "static const int args" + std::to_string(c) + "[] = {";
    for (size_t a = 0; a < p.calls[c].args.size(); ++a)
      s += (a ? ", " : "") + std::to_string(p.calls[c].args[a]);
    s += "};\n";
  }
  s += "\nstatic const tgc_call_info calls[] = {\n";
  char buf[128];
  for (size_t c = 0; c < p.calls.size(); ++c) {
    const KernelDesc &k = p.kernels[p.calls[c].kernel];
    std::snprintf(buf, sizeof(buf), "%.17g, %.17g", k.info.flops, k.info.bytes);
    auto dims = [](const int64_t d[3]) {
      return "{" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "}";
    };
    std::string launch = gpu ? quote(o.prefix + k.symbol) + ", " + dims(k.info.grid) + ", " + dims(k.info.block)
                             : std::string("0, {0, 0, 0}, {0, 0, 0}");
    size_t args = callArgCount(p, p.calls[c], gpu);
    s += "    {" + quote(k.info.name) + ", " + (gpu ? std::string("0") : o.prefix + k.symbol) + ", " +
         std::to_string(args) + ", args" + std::to_string(c) + ", " + std::to_string(gpu ? 0 : k.info.parallelExtent) +
         ", " + buf + ", " + launch + ", " + (p.calls[c].once ? "1" : "0") + ", " +
         std::to_string(p.calls[c].parallelVar) + ", " + dims32(p.calls[c].gridVar) + "},\n";
  }
  s += "};\n\n";
  s += "const tgc_program_info " + o.prefix + "program = {" + quote(p.name) + ", " + std::to_string(p.buffers.size()) +
       ", buffers, " + std::to_string(p.calls.size()) + ", calls, " + std::to_string(p.arenaBytes) + ", " +
       (o.embedWeights || o.weightsPath.empty() ? "0" : quote(o.weightsPath)) + ", " +
       (gpu ? quote(o.device) + ", code, " + std::to_string(o.code.size()) : std::string("0, 0, 0")) + ", " +
       (o.fallback.empty() ? std::string("0, 0") : "fallback, " + std::to_string(o.fallback.size())) + "};\n";
  return s;
}

/// Parameter list of the run function: variables (the sizes of symbolic dimensions), inputs, then outputs, typed.
std::string runParams(const ProgramDesc &p) {
  std::string s;
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_VARIABLE)
      s += (s.empty() ? "" : ", ") + std::string("int64_t ") + symbolName(b.name);
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_INPUT)
      s += (s.empty() ? "" : ", ") + std::string("const ") + cElemType(b.dtype) + " *" + symbolName(b.name);
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_OUTPUT)
      s += (s.empty() ? "" : ", ") + cElemType(b.dtype) + " *" + symbolName(b.name);
  return s.empty() ? "void" : s;
}

std::string libraryApi(const ProgramDesc &p, const EmitOptions &o) {
  const std::string &n = o.prefix;
  std::string ins, outs;
  int ni = 0, no = 0;
  for (const BufferDesc &b : p.buffers) {
    if (b.kind == TGC_INPUT) {
      ins += (ins.empty() ? "" : ", ") + symbolName(b.name);
      ++ni;
    }
    if (b.kind == TGC_OUTPUT) {
      outs += (outs.empty() ? "" : ", ") + symbolName(b.name);
      ++no;
    }
  }
  std::string s = R"(
static tgc_model *instance;
static char last_error[512];

const char *NAME_error(void) { return last_error; }

int NAME_init(const char *weights_path, int num_threads) {
  if (instance)
    tgc_model_destroy(instance);
  instance = tgc_model_create(&NAME_program, weights_path, num_threads, last_error, sizeof last_error);
  return instance ? 0 : -1;
}

int NAME_run(@PARAMS@) {
  if (!instance && NAME_init(0, 0) != 0)
    return -1;@SETVARS@
  const void *inputs[] = {@INS@};
  void *outputs[] = {@OUTS@};
  if (tgc_model_run(instance, inputs, outputs) == 0)
    return 0;
  snprintf(last_error, sizeof last_error, "%s", tgc_model_error(instance));
  return -1;
}

void NAME_free(void) {
  tgc_model_destroy(instance);
  instance = 0;
}

static const tgc_buffer_info *io(int kind, int i) {
  for (int b = 0; b < NAME_program.num_buffers; ++b)
    if ((int)NAME_program.buffers[b].kind == kind && i-- == 0)
      return &NAME_program.buffers[b];
  return 0;
}

int NAME_num_inputs(void) { return @NI@; }
int NAME_num_outputs(void) { return @NO@; }
const char *NAME_input_name(int i) { const tgc_buffer_info *b = io(TGC_INPUT, i); return b ? b->name : 0; }
const char *NAME_output_name(int i) { const tgc_buffer_info *b = io(TGC_OUTPUT, i); return b ? b->name : 0; }
tgc_dtype NAME_input_dtype(int i) { const tgc_buffer_info *b = io(TGC_INPUT, i); return b ? b->dtype : TGC_F32; }
tgc_dtype NAME_output_dtype(int i) { const tgc_buffer_info *b = io(TGC_OUTPUT, i); return b ? b->dtype : TGC_F32; }
int NAME_input_rank(int i) { const tgc_buffer_info *b = io(TGC_INPUT, i); return b ? b->rank : -1; }
int NAME_output_rank(int i) { const tgc_buffer_info *b = io(TGC_OUTPUT, i); return b ? b->rank : -1; }
const int64_t *NAME_input_shape(int i) { const tgc_buffer_info *b = io(TGC_INPUT, i); return b ? b->shape : 0; }
const int64_t *NAME_output_shape(int i) { const tgc_buffer_info *b = io(TGC_OUTPUT, i); return b ? b->shape : 0; }
)";
  auto replace = [&](const std::string &from, const std::string &to) {
    for (size_t pos; (pos = s.find(from)) != std::string::npos;)
      s.replace(pos, from.size(), to);
  };
  std::string setVars;
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_VARIABLE)
      setVars += "\n  if (tgc_model_set_variable(instance, " + quote(b.name) + ", " + symbolName(b.name) +
                 ") != 0) {\n    snprintf(last_error, sizeof last_error, \"%s\", tgc_model_error(instance));\n"
                 "    return -1;\n  }";
  replace("@SETVARS@", setVars);
  replace("NAME_", n);
  replace("@PARAMS@", runParams(p));
  replace("@INS@", ins.empty() ? "0" : ins);
  replace("@OUTS@", outs.empty() ? "0" : outs);
  replace("@NI@", std::to_string(ni));
  replace("@NO@", std::to_string(no));
  return s;
}

} // namespace

std::string emitProgramC(const ProgramDesc &p, const EmitOptions &o) {
  std::string s = "/* Generated by tgc from " + o.source + ": the program '" + p.name + "' (" +
                  std::to_string(p.calls.size()) +
                  " kernel calls). */\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n"
                  "#include \"tgc_runtime.h\"\n\n";
  s += tables(p, o);
  if (o.library)
    s += libraryApi(p, o);
  else
    s += "\nint main(int argc, char **argv) { return tgc_main(&" + o.prefix + "program, argc, argv); }\n";
  return s;
}

std::string emitHeader(const ProgramDesc &p, const EmitOptions &o) {
  const std::string &n = o.prefix;
  std::string guard = symbolName(n) + "H";
  for (char &c : guard)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  std::string doc;
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_VARIABLE)
      doc += std::string(" *   variable ") + b.name + ": the size of dimension " + b.name + ", " +
             std::to_string(b.varMin) + " to " + std::to_string(b.varMax) + " (else -1 is returned)\n";
  for (const BufferDesc &b : p.buffers)
    if (b.kind == TGC_INPUT || b.kind == TGC_OUTPUT)
      doc += std::string(" *   ") + (b.kind == TGC_INPUT ? "input  " : "output ") + b.name + ": " + b.dtype.str() +
             symbolicShape(p, b) + ", row-major\n";
  std::string s = "/* " + n + "run and friends: the model '" + p.name + "' compiled by tgc from " + o.source +
                  ".\n"
                  " *\n"
                  " * int " +
                  n + "run(" + runParams(p) +
                  ");\n"
                  " *   Runs the model once. Buffers are caller-owned, row-major, of these dtypes and shapes:\n" +
                  doc +
                  " *   float16 and bfloat16 tensors are passed as their 16-bit patterns. Returns 0, or -1 when the\n"
                  " *   model could not be prepared (see " +
                  n +
                  "error()). The first call prepares the model (loads\n"
                  " *   weights, allocates memory, starts threads); " +
                  n +
                  "init() does it explicitly. Not thread-safe:\n"
                  " *   one run at a time.\n"
                  " */\n"
                  "#ifndef " +
                  guard + "\n#define " + guard +
                  "\n\n#include <stdbool.h>\n#include <stdint.h>\n"
                  "#include \"tgc_runtime.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  s += "int " + n + "run(" + runParams(p) + ");\n";
  s += "/* Prepare with weights from this safetensors file (NULL: the embedded weights, or the file named at\n"
       " * compile time) on num_threads threads (<= 0: one per core). Returns 0, or -1 (see " +
       n + "error()). */\n";
  s += "int " + n + "init(const char *weights_path, int num_threads);\n";
  s += "void " + n + "free(void);\nconst char *" + n + "error(void);\n\n/* Introspection. */\n";
  for (const char *io : {"input", "output"}) {
    s += "int " + n + "num_" + io + "s(void);\n";
    s += "const char *" + n + io + "_name(int i);\n";
    s += "tgc_dtype " + n + io + "_dtype(int i);\n";
    s += "int " + n + io + "_rank(int i);\n";
    s += "const int64_t *" + n + io + "_shape(int i);\n";
  }
  s += "\n/* The program description the functions above run (for tgc_model_create). */\n";
  s += "extern const tgc_program_info " + n + "program;\n";
  s += "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return s;
}

} // namespace tgc
