//===- KilnBase.td - Kiln's discardable attributes, declared once -------------===//
//
// The `kiln` dialect has no operations: it owns the discardable `kiln.*` attributes that passes
// leave on operations, function arguments and results for later passes (dispatch formation
// for kiln-form-program, fusion for the report, precision for the library calls...). Each is
// declared once, with the kind of value it holds, in KilnAttributes.cpp; the dialect verifies
// every `kiln.*` attribute against that table, so a misspelled name or a value of the wrong kind
// fails verification after the pass that wrote it instead of being silently ignored.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNBASE_TD
#define KILN_DIALECTS_KILN_KILNBASE_TD

include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Kiln's discardable attributes, declared once and verified";
  let description = [{
    Passes communicate through discardable attributes named `kiln.<name>`: the dispatch
    functions a kernel group became (`kiln.dispatch`, `kiln.workgroup_count`, `kiln.bounds`),
    the fusion and precision decisions (`kiln.fusion_group`, `kiln.fusion_report`,
    `kiln.math`), the names and declared types of a model's inputs and outputs (`kiln.name`,
    `kiln.declared_type`), and the symbolic shapes of a program over a range of shapes
    (`kiln.dims`, `kiln.symbols`). The dialect declares each of them once, with the kind of
    value it holds, and verifies every `kiln.*` attribute it meets against that table.

    ```mlir
    func.func @main(%x: tensor<1x8xf32> {kiln.name = "input"}) -> tensor<1x8xf32>
    ```
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

#endif // KILN_DIALECTS_KILN_KILNBASE_TD
