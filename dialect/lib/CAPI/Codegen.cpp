//===- Codegen.cpp - LLVM-dialect module to machine code ------------------===//
//
// See dlvm-c/Codegen.h. Mirrors what mlir::ExecutionEngine does before it
// hands a module to ORC (translation, packed wrappers, the default LLVM
// pipeline of the opt level), then emits object files instead of JIT-linking
// them in memory: the CPU back end links those into a shared object that a
// disk cache keeps and any process can load (backend/artifact.py).
//
// Code generation, not optimization, is most of LLVM's time on dlvm's code
// (measured on the MLP training step, Nov 2026: O3 0.5 s, codegen 2.0 s), so
// after optimization the module is split (llvm::SplitModule, as
// llvm::splitCodeGen does for LTO) and the partitions are compiled on
// parallel threads, each in an LLVMContext of its own.
//
//===----------------------------------------------------------------------===//
#include "dlvm-c/Codegen.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Target {
  llvm::Triple triple;
  std::string cpu;
  std::string features;
};

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string hostFeatures() {
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ',';
    features += (feature.second ? "+" : "-") + feature.first().str();
  }
  return features;
}

Target resolveTarget(const DlvmCodegenOptions &options) {
  Target target;
  std::string triple = options.triple && *options.triple
                           ? std::string(options.triple)
                           : llvm::sys::getDefaultTargetTriple();
  target.triple = llvm::Triple(triple);
  bool hostCpu = !(options.cpu && *options.cpu);
  target.cpu = hostCpu ? llvm::sys::getHostCPUName().str() : options.cpu;
  if (options.features && *options.features)
    target.features = options.features;
  else if (hostCpu)
    target.features = hostFeatures();
  return target;
}

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const Target &target,
                                                       int optLevel,
                                                       std::string &error) {
  const llvm::Target *found =
      llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!found)
    return nullptr;
  llvm::CodeGenOptLevel level = optLevel <= 0   ? llvm::CodeGenOptLevel::None
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(found->createTargetMachine(
      target.triple, target.cpu, target.features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    error = "cannot create a target machine for " + target.triple.str();
  return machine;
}

/// `_mlir_<f>(void **args)` for each C-interface function `f`: argument i is
/// read from `*args[i]`, a result is stored through `args[n]`
/// (ExecutionEngine::packFunctionArguments' convention, which
/// dlvm_mlir._dlvm.invoke calls).
void addPackedWrappers(llvm::Module &module) {
  std::vector<llvm::Function *> functions;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with("_mlir_ciface_"))
      functions.push_back(&function);
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  for (llvm::Function *function : functions) {
    auto *type = llvm::FunctionType::get(builder.getVoidTy(),
                                         {builder.getPtrTy()}, false);
    auto *wrapper =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                               "_mlir_" + function->getName(), module);
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", wrapper));
    llvm::Value *packed = wrapper->getArg(0);
    std::vector<llvm::Value *> arguments;
    for (llvm::Argument &argument : function->args()) {
      llvm::Value *slot = builder.CreateConstGEP1_64(builder.getPtrTy(), packed,
                                                     argument.getArgNo());
      llvm::Value *pointer = builder.CreateLoad(builder.getPtrTy(), slot);
      arguments.push_back(builder.CreateLoad(argument.getType(), pointer));
    }
    llvm::Value *result = builder.CreateCall(function, arguments);
    if (!function->getReturnType()->isVoidTy()) {
      llvm::Value *slot = builder.CreateConstGEP1_64(
          builder.getPtrTy(), packed, function->arg_size());
      llvm::Value *pointer = builder.CreateLoad(builder.getPtrTy(), slot);
      builder.CreateStore(result, pointer);
    }
    builder.CreateRetVoid();
  }
}

/// The allocation functions compiled code calls (finalize-memref-to-llvm,
/// with and without use-generic-functions; CUDA host code's device buffers,
/// gpu-to-llvm) and the index of their size argument.
constexpr std::pair<llvm::StringLiteral, unsigned> allocationFunctions[] = {
    {"_mlir_memref_to_llvm_alloc", 0},
    {"_mlir_memref_to_llvm_aligned_alloc", 1},
    {"malloc", 0},
    {"aligned_alloc", 1},
    {"mgpuMemAlloc", 0},
};

/// A buffer allocation that returns NULL (for a size above 0) stores -1 in
/// the i64 global `slotName` and returns from its function at once, instead
/// of writing through NULL; each direct call of a function that may fail is
/// followed by a check of the slot that returns too, up to the entry points,
/// whose caller reads the slot (runtime.py, the C header). Presplit
/// coroutines (the async dialect's task bodies) are left alone: the parallel
/// bodies they call return early, and the entry point returns after the
/// parallel loop. A non-void function returns poison, which no caller reads.
/// Blocks allocated before the failure are not freed.
void addAllocationChecks(llvm::Module &module, llvm::StringRef slotName) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::IntegerType *i64 = builder.getInt64Ty();
  llvm::GlobalVariable *slot = module.getGlobalVariable(slotName);
  if (!slot)
    slot = new llvm::GlobalVariable(module, i64, /*isConstant=*/false,
                                    llvm::GlobalValue::ExternalLinkage,
                                    llvm::ConstantInt::get(i64, 0), slotName);
  llvm::MDNode *unlikely =
      llvm::MDBuilder(context).createBranchWeights(1, 1u << 20);
  llvm::DenseMap<llvm::Function *, llvm::BasicBlock *> exits;
  // The block a failing function branches to: store -1, return.
  auto exitOf = [&](llvm::Function *function) {
    llvm::BasicBlock *&exit = exits[function];
    if (exit)
      return exit;
    exit = llvm::BasicBlock::Create(context, "allocation_failed", function);
    builder.SetInsertPoint(exit);
    builder.CreateAlignedStore(llvm::ConstantInt::get(i64, -1), slot,
                               llvm::Align(8))
        ->setAtomic(llvm::AtomicOrdering::Monotonic);
    llvm::Type *type = function->getReturnType();
    if (type->isVoidTy())
      builder.CreateRetVoid();
    else
      builder.CreateRet(llvm::PoisonValue::get(type));
    return exit;
  };
  // Splits after `call`; branches to the exit where `failed` (built at the
  // end of the call's block) holds.
  auto check = [&](llvm::CallInst *call,
                   llvm::function_ref<llvm::Value *()> failed) {
    llvm::BasicBlock *block = call->getParent();
    llvm::BasicBlock *exit = exitOf(block->getParent());
    llvm::BasicBlock *rest = block->splitBasicBlock(call->getNextNode());
    block->getTerminator()->eraseFromParent();
    builder.SetInsertPoint(block);
    builder.CreateCondBr(failed(), exit, rest, unlikely);
  };
  std::vector<llvm::Function *> mayFail;
  llvm::SmallPtrSet<llvm::Function *, 16> seen;
  auto directCalls = [](llvm::Function *callee) {
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *user : callee->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
        if (call->getCalledFunction() == callee &&
            !call->getFunction()->isPresplitCoroutine())
          calls.push_back(call);
    return calls;
  };
  for (auto [name, sizeIndex] : allocationFunctions) {
    llvm::Function *allocate = module.getFunction(name);
    if (!allocate)
      continue;
    for (llvm::CallInst *call : directCalls(allocate)) {
      check(call, [&, sizeIndex = sizeIndex] {
        return builder.CreateAnd(
            builder.CreateIsNull(call),
            builder.CreateIsNotNull(call->getArgOperand(sizeIndex)));
      });
      if (seen.insert(call->getFunction()).second)
        mayFail.push_back(call->getFunction());
    }
  }
  while (!mayFail.empty()) {
    llvm::Function *callee = mayFail.back();
    mayFail.pop_back();
    for (llvm::CallInst *call : directCalls(callee)) {
      check(call, [&] {
        llvm::LoadInst *value = builder.CreateAlignedLoad(i64, slot, llvm::Align(8));
        value->setAtomic(llvm::AtomicOrdering::Monotonic);
        return builder.CreateICmpSLT(value, llvm::ConstantInt::get(i64, 0));
      });
      if (seen.insert(call->getFunction()).second)
        mayFail.push_back(call->getFunction());
    }
  }
}

/// Each defined function whose name starts with one of `prefixes` (the entry
/// points a caller, Python or C, calls) becomes a bracket around its former
/// body, now an internal function: `dlvmRuntimeCallBegin` before it and
/// `dlvmRuntimeCallEnd(mark, slot != 0)` after it, so that the caching
/// allocator frees the buffers a failed call left allocated (it returns early,
/// see addAllocationChecks, which must run first: the bracket itself never
/// returns early).
void addCallBrackets(llvm::Module &module, llvm::StringRef prefixes,
                     llvm::StringRef slotName) {
  llvm::SmallVector<llvm::StringRef> names;
  prefixes.split(names, ',', -1, false);
  llvm::GlobalVariable *slot = module.getGlobalVariable(slotName);
  if (!slot || names.empty())
    return;
  std::vector<llvm::Function *> entries;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        llvm::any_of(names, [&](llvm::StringRef prefix) {
          return function.getName().starts_with(prefix);
        }))
      entries.push_back(&function);
  if (entries.empty())
    return;
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::IntegerType *i64 = builder.getInt64Ty();
  llvm::FunctionCallee begin = module.getOrInsertFunction(
      "dlvmRuntimeCallBegin", llvm::FunctionType::get(i64, false));
  llvm::FunctionCallee end = module.getOrInsertFunction(
      "dlvmRuntimeCallEnd",
      llvm::FunctionType::get(i64, {i64, builder.getInt32Ty()}, false));
  for (llvm::Function *entry : entries) {
    auto *body = llvm::Function::Create(entry->getFunctionType(),
                                        llvm::GlobalValue::InternalLinkage,
                                        entry->getName() + ".body", module);
    body->copyAttributesFrom(entry);
    body->setLinkage(llvm::GlobalValue::InternalLinkage);
    body->setVisibility(llvm::GlobalValue::DefaultVisibility);
    body->splice(body->begin(), entry);
    for (auto [from, to] : llvm::zip(entry->args(), body->args())) {
      from.replaceAllUsesWith(&to);
      to.takeName(&from);
    }
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", entry));
    llvm::Value *mark = builder.CreateCall(begin);
    llvm::SmallVector<llvm::Value *> arguments;
    for (llvm::Argument &argument : entry->args())
      arguments.push_back(&argument);
    llvm::CallInst *result = builder.CreateCall(body, arguments);
    llvm::LoadInst *code = builder.CreateAlignedLoad(i64, slot, llvm::Align(8));
    code->setAtomic(llvm::AtomicOrdering::Monotonic);
    llvm::Value *failed = builder.CreateZExt(
        builder.CreateICmpNE(code, llvm::ConstantInt::get(i64, 0)),
        builder.getInt32Ty());
    builder.CreateCall(end, {mark, failed});
    if (entry->getReturnType()->isVoidTy())
      builder.CreateRetVoid();
    else
      builder.CreateRet(result);
  }
}

/// Definitions whose names start with none of `exported` become hidden:
/// a loaded object exports its entry points and metadata only.
void hideInternals(llvm::Module &module, llvm::StringRef exported) {
  llvm::SmallVector<llvm::StringRef> prefixes;
  exported.split(prefixes, ',', -1, false);
  auto hide = [&](llvm::GlobalValue &value) {
    if (value.isDeclaration() || value.hasLocalLinkage() ||
        value.hasAppendingLinkage()) // llvm.global_ctors and the like
      return;
    for (llvm::StringRef prefix : prefixes)
      if (value.getName().starts_with(prefix))
        return;
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  };
  for (llvm::Function &function : module)
    hide(function);
  for (llvm::GlobalVariable &global : module.globals())
    hide(global);
}

void addMetadata(llvm::Module &module, llvm::StringRef metadata) {
  if (metadata.empty())
    return;
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(module.getContext(), metadata, true);
  new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text,
                           "__dlvm_metadata");
}

/// A constructor that reserves the thread pool's workers when the object is
/// loaded (by dlopen or by a C program's loader): a program compiled for N
/// threads keeps N - 1 workers, its caller being the N-th.
void addWorkerReservation(llvm::Module &module, int workers) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  llvm::FunctionCallee reserve = module.getOrInsertFunction(
      "dlvmRuntimeReserveWorkers", builder.getVoidTy(), builder.getInt64Ty());
  auto *init = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), false),
      llvm::GlobalValue::InternalLinkage, "__dlvm_reserve_workers", module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", init));
  builder.CreateCall(reserve, {builder.getInt64(workers)});
  builder.CreateRetVoid();
  llvm::appendToGlobalCtors(module, init, /*Priority=*/65535);
}

/// Removes `pass` from a textual pass pipeline (`a,b(c,pass,d),...`): the
/// token and one comma beside it. Whether it was there.
bool removePass(std::string &text, llvm::StringRef pass) {
  for (size_t at = text.find(pass.str()); at != std::string::npos;
       at = text.find(pass.str(), at + 1)) {
    size_t end = at + pass.size();
    char before = at ? text[at - 1] : ',';
    char after = end < text.size() ? text[end] : ',';
    bool token = (before == ',' || before == '(') && (after == ',' || after == ')');
    if (!token)
      continue;
    if (before == ',')
      text.erase(at - 1, pass.size() + 1);
    else if (after == ',')
      text.erase(at, pass.size() + 1);
    else
      continue; // the only pass of its group: keep it
    return true;
  }
  return false;
}

/// LLVM's IR pipeline as dlvm runs it: the default pipeline of the opt level,
/// tuned and pruned for code that the transform schedules already vectorized.
class Optimizer {
public:
  explicit Optimizer(llvm::TargetMachine &machine)
      : builder(&machine, tuning(), std::nullopt, &instrumentation) {
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
  }

  /// The pipeline of `optLevel` (0..3). O0 still lowers the async dialect's
  /// coroutines. From O1 on, without loop load elimination, which forwards
  /// stores of one loop iteration to loads of the next: dlvm's loops arrive
  /// with their accumulators already in registers (the schedules hoist them),
  /// and its loop-access analysis of register tiles' many pointers (scalar
  /// evolution of each) was 40% of the IR pipeline on a CNN training step
  /// (Nov 27: 1.8 of 4.2 s of O3; the step ran as fast without it). The
  /// pipeline is printed, pruned and parsed again (LLVM keeps its default
  /// pipelines printable); if that fails, it stays whole.
  llvm::ModulePassManager pipeline(int optLevel) {
    llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                    : optLevel == 1 ? llvm::OptimizationLevel::O1
                                    : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                    : llvm::OptimizationLevel::O3;
    if (optLevel <= 0)
      return builder.buildO0DefaultPipeline(level);
    llvm::ModulePassManager whole = builder.buildPerModuleDefaultPipeline(level);
    std::string text = print(whole);
    if (!removePass(text, "loop-load-elim"))
      return whole;
    llvm::ModulePassManager pruned;
    if (llvm::Error error = builder.parsePassPipeline(pruned, text)) {
      llvm::consumeError(std::move(error));
      return whole;
    }
    return pruned;
  }

  /// `pipeline` as text (`opt -passes=` syntax).
  std::string print(llvm::ModulePassManager &pipeline) {
    std::string text;
    llvm::raw_string_ostream stream(text);
    pipeline.printPipeline(stream, [&](llvm::StringRef className) {
      llvm::StringRef name = instrumentation.getPassNameForClassName(className);
      return name.empty() ? className : name;
    });
    return text;
  }

  void run(llvm::Module &module, int optLevel) {
    pipeline(optLevel).run(module, modules);
  }

private:
  // dlvm's code arrives vectorized and unrolled (the transform schedules):
  // LLVM's loop vectorizer found nothing left to do on the programs measured
  // (MLP step, LSTM gradient, Nov 2026) but took 40% of the IR pipeline,
  // trying the scalar remainder and copy loops. SLP stays (it packs those).
  static llvm::PipelineTuningOptions tuning() {
    llvm::PipelineTuningOptions options;
    options.LoopUnrolling = true;
    options.LoopInterleaving = false;
    options.LoopVectorization = false;
    options.SLPVectorization = true;
    return options;
  }

  llvm::PassInstrumentationCallbacks instrumentation; // pass classes' names
  llvm::PassBuilder builder;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
};

/// Sets LLVM command-line options (`name=value`, separated by spaces, after
/// dlvm's defaults), as `-mllvm` does: they are process-wide, so this runs
/// before any codegen thread starts. Post-RA list scheduling, for one, costs
/// as much as the rest of code generation on the long straight-line blocks of
/// register tiles (MLP step: 1.2 of 2.0 s) and is not worth it on
/// out-of-order x86 cores.
std::string setLLVMOptions(bool postRAScheduling, llvm::StringRef settings) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  auto &options = llvm::cl::getRegisteredOptions();
  llvm::SmallVector<std::pair<std::string, std::string>> assignments;
  for (const char *name : {"post-RA-scheduler", "enable-post-misched"})
    assignments.emplace_back(name, postRAScheduling ? "true" : "false");
  // The machine scheduler's dependence maps grow quadratically on long blocks
  // of loads and stores; past 200 memory ops (default 1000) they are reduced.
  // MLP step, Nov 2026: codegen 1.66 -> 0.99 s, the step's time unchanged.
  assignments.emplace_back("dag-maps-huge-region", "200");
  llvm::SmallVector<llvm::StringRef> words;
  settings.split(words, ' ', -1, false);
  for (llvm::StringRef word : words) {
    auto [name, value] = word.ltrim('-').split('=');
    assignments.emplace_back(name.str(), value.empty() ? "true" : value.str());
  }
  for (auto &[name, value] : assignments) {
    auto found = options.find(name);
    if (found == options.end())
      return "unknown LLVM option '" + name + "'";
    // position 0 would read as "not given on the command line"
    if (found->second->addOccurrence(1, name, value))
      return "bad value '" + value + "' for LLVM option '" + name + "'";
  }
  return "";
}

bool emit(llvm::Module &module, llvm::TargetMachine &machine,
          llvm::CodeGenFileType type, llvm::SmallVectorImpl<char> &out,
          std::string &error) {
  llvm::raw_svector_ostream stream(out);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, type)) {
    error = "the target machine cannot emit this file type";
    return false;
  }
  passes.run(module);
  return true;
}

} // namespace

MlirLogicalResult dlvmCodegen(MlirModule module, DlvmCodegenOptions options,
                              MlirStringCallback onOutput, void *outputData,
                              MlirStringCallback onError, void *errorData) {
  auto fail = [&](const std::string &message) {
    onError(mlirStringRefCreate(message.data(), message.size()), errorData);
    return mlirLogicalResultFailure();
  };
  auto output = [&](llvm::StringRef bytes) {
    onOutput(mlirStringRefCreate(bytes.data(), bytes.size()), outputData);
  };
  initializeTargets();
  mlir::ModuleOp op = unwrap(module);
  mlir::MLIRContext *context = op->getContext();
  mlir::registerBuiltinDialectTranslation(*context);
  mlir::registerLLVMDialectTranslation(*context);
  mlir::registerGPUDialectTranslation(*context);
  mlir::registerNVVMDialectTranslation(*context);

  Target target = resolveTarget(options);
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      makeTargetMachine(target, options.codegenOptLevel, error);
  if (!machine)
    return fail(error);

  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(op, *llvmContext);
  if (!llvmModule)
    return fail("cannot translate the module to LLVM IR");
  llvmModule->setTargetTriple(target.triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  addPackedWrappers(*llvmModule);
  if (options.errorSlot && *options.errorSlot) {
    addAllocationChecks(*llvmModule, options.errorSlot);
    if (options.bracketed && *options.bracketed)
      addCallBrackets(*llvmModule, options.bracketed, options.errorSlot);
  }
  addMetadata(*llvmModule, unwrap(options.metadata));
  if (options.workers > 0)
    addWorkerReservation(*llvmModule, options.workers);
  if (options.exported)
    hideInternals(*llvmModule, options.exported);
  {
    std::string problems;
    llvm::raw_string_ostream stream(problems);
    if (llvm::verifyModule(*llvmModule, &stream))
      return fail("invalid LLVM IR: " + problems);
  }
  // before the IR pipeline too: options of its passes (-disable-loop-idiom-all, say) apply
  // from the first compile of a process
  error = setLLVMOptions(options.postRAScheduling,
                         options.llvmOptions ? options.llvmOptions : "");
  if (!error.empty())
    return fail(error);
  Optimizer(*machine).run(*llvmModule, options.optLevel);

  if (options.output == DlvmCodegenLLVMIR) {
    std::string text;
    llvm::raw_string_ostream stream(text);
    llvmModule->print(stream, nullptr);
    output(text);
    return mlirLogicalResultSuccess();
  }
  if (options.output == DlvmCodegenBitcode) {
    llvm::SmallVector<char> bytes;
    llvm::raw_svector_ostream stream(bytes);
    llvm::WriteBitcodeToFile(*llvmModule, stream);
    output(llvm::StringRef(bytes.data(), bytes.size()));
    return mlirLogicalResultSuccess();
  }
  llvm::CodeGenFileType type = options.output == DlvmCodegenAssembly
                                   ? llvm::CodeGenFileType::AssemblyFile
                                   : llvm::CodeGenFileType::ObjectFile;
  unsigned partitions =
      type == llvm::CodeGenFileType::ObjectFile
          ? static_cast<unsigned>(std::max(1, options.partitions))
          : 1;
  unsigned definitions = 0;
  for (llvm::Function &function : *llvmModule)
    definitions += !function.isDeclaration();
  partitions = std::max(1u, std::min(partitions, definitions));
  if (partitions == 1) {
    llvm::SmallVector<char> bytes;
    if (!emit(*llvmModule, *machine, type, bytes, error))
      return fail(error);
    output(llvm::StringRef(bytes.data(), bytes.size()));
    return mlirLogicalResultSuccess();
  }

  // Each partition travels as bitcode into a context of its own thread.
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  llvm::SplitModule(
      *llvmModule, partitions,
      [&](std::unique_ptr<llvm::Module> part) {
        bitcode.emplace_back();
        llvm::raw_svector_ostream stream(bitcode.back());
        llvm::WriteBitcodeToFile(*part, stream);
      },
      /*PreserveLocals=*/false);
  llvmModule.reset();
  std::vector<llvm::SmallVector<char, 0>> objects(bitcode.size());
  std::vector<std::string> errors(bitcode.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bitcode.size(); ++i) {
    threads.emplace_back([&, i] {
      llvm::LLVMContext partContext;
      llvm::MemoryBufferRef buffer(
          llvm::StringRef(bitcode[i].data(), bitcode[i].size()), "partition");
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(buffer, partContext);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        return;
      }
      std::unique_ptr<llvm::TargetMachine> partMachine =
          makeTargetMachine(target, options.codegenOptLevel, errors[i]);
      if (partMachine)
        emit(**part, *partMachine, type, objects[i], errors[i]);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  for (size_t i = 0; i < objects.size(); ++i) {
    if (!errors[i].empty())
      return fail(errors[i]);
    output(llvm::StringRef(objects[i].data(), objects[i].size()));
  }
  return mlirLogicalResultSuccess();
}

MlirLogicalResult dlvmOptimizationPipeline(int optLevel,
                                           MlirStringCallback callback,
                                           void *userData) {
  initializeTargets();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      makeTargetMachine(resolveTarget(DlvmCodegenOptions{}), 3, error);
  if (!machine) {
    callback(mlirStringRefCreate(error.data(), error.size()), userData);
    return mlirLogicalResultFailure();
  }
  Optimizer optimizer(*machine);
  llvm::ModulePassManager pipeline = optimizer.pipeline(optLevel);
  std::string text = optimizer.print(pipeline);
  callback(mlirStringRefCreate(text.data(), text.size()), userData);
  return mlirLogicalResultSuccess();
}

void dlvmHostTarget(MlirStringCallback callback, void *userData) {
  std::string text = llvm::sys::getDefaultTargetTriple() + "\n" +
                     llvm::sys::getHostCPUName().str() + "\n" + hostFeatures();
  callback(mlirStringRefCreate(text.data(), text.size()), userData);
}
