//===- Passes.td - Passes over the program dialect ---------------------------===//

#ifndef KILN_COMPILER_PROGRAM_PASSES_TD
#define KILN_COMPILER_PROGRAM_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Forming the program
//===----------------------------------------------------------------------===//

def FormProgramPass : Pass<"kiln-form-program", "mlir::ModuleOp"> {
  let summary = "Turns the entry function into a program.program over buffers";
  let description = [{
    Runs after dispatch formation. The entry function (calls of dispatch functions and library
    functions, views, tensor constants and its return) becomes a `program.program` of the same
    name: each argument a `program.input`, each tensor constant a `program.constant`, each call
    result a `program.alloc` written by a `program.dispatch` or `program.library_call` (the
    call's attributes become the library call's parameters), each view a `program.view`. A
    returned result is written straight into its `program.output`; a value that cannot be (an
    input, a constant, a value returned twice) is copied into it. The dispatch functions move
    into a nested `builtin.module @kernels`, which code generation compiles; the library
    function declarations are erased.

    A dispatch whose kernel is one elementwise `linalg.generic` lists in `in_place` the inputs
    read only at the element it writes, so that the memory planner may reuse their bytes.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "The entry function: the model's, which becomes the program">,
    Option<"device", "device", "std::string", "\"cpu\"",
           "The device the program runs on: cpu or cuda">,
  ];
  let dependentDialects = ["kiln::program::ProgramDialect"];
}

def DeduplicateKernelsPass : Pass<"kiln-deduplicate-kernels", "mlir::ModuleOp"> {
  let summary = "Compiles identical dispatch functions once";
  let description = [{
    Dispatch functions of the `@kernels` module that are the same but for their names and
    descriptions (BERT's twelve layers form the same kernels twelve times) are merged into the
    first of them; every `program.dispatch` of a duplicate dispatches the one kept, and keeps its
    own description.
  }];
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def AssignStreamsPass : Pass<"kiln-assign-streams", "mlir::ModuleOp"> {
  let summary = "Spreads independent steps over several streams to run at the same time";
  let description = [{
    With `streams` above 1, list scheduling in program order: each step starts once the steps it
    depends on through buffers (StepOrder's data predecessors) have finished, by the modeled time
    of each step (the fusion cost model's roofline for the program's device), and goes to the
    stream where it can start first; on a tie, to the stream whose last step it depends on (no
    wait added), then the lowest. A chain stays on one stream; branches that do not depend on
    each other (inception blocks, the towers of a two-tower model) go to different streams. Each
    step records its `stream` when not 0; the program records `stream_count` and
    `serial_arena_size`, the arena the program takes on one stream, so that the report can say
    what running at the same time costs in memory (the memory planner keeps the buffers of steps
    that may run at the same time apart). The runtimes run a program's streams at the same time:
    threads on the CPU, CUDA streams ordered by events on a GPU (captured together into the
    program's graph).
  }];
  let options = [
    Option<"streams", "streams", "int64_t", "1", "The most streams (1: every step on stream 0)">,
    Option<"alignment", "alignment", "int64_t", "64", "The alignment of every offset, in bytes">,
  ];
}

def RematerializePass : Pass<"kiln-rematerialize", "mlir::ModuleOp"> {
  let summary = "Recomputes cheap values near their late uses until the arena fits a limit";
  let description = [{
    With `memory-limit` above 0: while the planned arena is above the limit, takes the step where
    the most bytes are live and the allocations live there that the step does not bind; each is a
    candidate when the one step that writes it can run again later (its inputs are program
    inputs, constants, or allocations nothing overwrites in between, which then stay live until
    it runs). The candidate with the least modeled recompute time per byte freed at that step
    (the fusion cost model's roofline for the program's device) is recomputed: the step is
    cloned, writing a new allocation, right before the first use after the peak, and the later
    uses read the copy. A change is kept when it lowers the peak, or the number of steps at the
    peak (repeated layers peak alike), and is undone otherwise; the program is re-planned after
    each. The clone
    runs the same kernel or library call on the same inputs, so the results are bitwise those of
    the program without the limit.

    The program records `memory_limit` and `unlimited_arena_size` (the arena without the limit),
    and each clone carries the `recomputed` attribute. A limit that cannot be met is an error
    naming the limit, the best arena reached and the allocations live at the peak that could not
    be freed.
  }];
  let options = [
    Option<"memoryLimit", "memory-limit", "int64_t", "0",
           "The most bytes the arena may take (0: no limit)">,
    Option<"alignment", "alignment", "int64_t", "64", "The alignment of every offset, in bytes">,
  ];
  let dependentDialects = ["kiln::program::ProgramDialect"];
}

def PlanMemoryPass : Pass<"kiln-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places every program.alloc at an offset in the device's arena";
  let description = [{
    Each allocation is live from the first step that binds it (directly or through views) to the
    last. With steps on several streams (`stream`), a step may run at the same time as the steps
    of other streams it is not ordered with (through a buffer one writes and the other reads or
    writes, directly or through other steps), and an allocation stays live across every step
    that may run at the same time as one of its users. Allocations live at the same step never
    share bytes; an output placed over the input of an elementwise dispatch (`in_place`) at the
    input's last use shares its bytes. Offsets come from best-fit packing in four orders
    (decreasing size, first step, greedy by breadth, longest-lived first), the smallest arena
    winning; when it is above the live peak, a seeded hill climb on the placement sequence moves
    a buffer that reaches the arena's top earlier and keeps each sequence whose arena is no
    larger (up to 512 packings). The program records `arena_size`, `naive_size` (the sum of every
    allocation), `peak_live_size` (the most bytes live at one step: no arena is smaller) and
    `alignment`.

    A program for a range of shapes (`kiln.symbols`) is planned above at its upper bounds, or at
    the nominal size of a dimension given without one. Its memory may instead be planned per
    run: each allocation gets `kiln.arena_slot` (the slot it shares bytes in) and the program
    `kiln.slot_steps` (each slot's first and last live step), from which the artifact's writer
    gives the runtime each value's size for the run (`kiln.dims`) and the slots' live steps; the
    runtime packs the slots for each shape as this pass does (the best of the four orders).
    `memory-plan` chooses: `per-run`, `bounds` (one plan for the upper bounds), or `auto`: per run
    where a dimension has no upper bound, else on the CPU where the arena of the ranges' smallest
    shape (recorded as `kiln.smallest_arena`) is under half the upper bounds' and no memory limit
    was asked for.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64", "The alignment of every offset, in bytes">,
    Option<"inPlace", "in-place", "bool", "true",
           "Place elementwise outputs over their dead inputs (in_place)">,
    Option<"memoryPlan", "memory-plan", "std::string", "\"auto\"",
           "A program for a range of shapes: auto, bounds or per-run">,
  ];
}

def VerifyMemoryPlanPass : Pass<"kiln-verify-memory-plan", "mlir::ModuleOp"> {
  let summary = "Proves that no two allocations live at the same step overlap";
  let description = [{
    Finds every allocation's users from the steps, independently of the planner, and fails
    naming both allocations when two share a byte while some step using one is not ordered
    before every step using the other (by stream order and the buffers steps share), unless the
    step they share writes one over the other in place at the same offset. Also fails for an
    allocation past the arena.
  }];
}

#endif // KILN_COMPILER_PROGRAM_PASSES_TD
