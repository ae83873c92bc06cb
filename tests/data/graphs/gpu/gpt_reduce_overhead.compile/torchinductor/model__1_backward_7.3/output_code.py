# AOT ID: ['1_backward']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
import triton
import triton.language as tl
from torch._inductor.runtime.triton_heuristics import start_graph, end_graph
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p
from torch._C import _cuda_getCurrentRawStream as get_raw_stream



# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/4l/c4luc5tkx3koc7xbpjlxfo6bkx2ep4nsx65honozg3y7jvxmtydh.py
# Topologically Sorted Source Nodes: [convert_element_type_105], Original ATen: [aten._to_copy]
# Source node to ATen node mapping:
#   convert_element_type_105 => convert_element_type_105
# Graph fragment:
#   %mm_1 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_1]
#   %convert_element_type_105 : Tensor "f32[1024, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mm_1, torch.float32), kwargs = {})
#   return %convert_element_type_105
triton_poi_fused__to_copy_0 = async_compile.triton('triton_poi_fused__to_copy_0', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 262144}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__to_copy_0', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 2621440}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__to_copy_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 262144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp1, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/eg/ceg4k7lqyybs4xcdtx2e3uhkqox6egu5a4tj2r2b46rg5intikor.py
# Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_31, mul_32, sum_1, mul_33, sum_2, mul_34, sub_10, sub_11, mul_35, convert_element_type_106, view_52], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
# Source node to ATen node mapping:
#   convert_element_type_104 => convert_element_type_104
#   convert_element_type_106 => convert_element_type_106
#   mul_31 => mul_31
#   mul_32 => mul_32
#   mul_33 => mul_33
#   mul_34 => mul_34
#   mul_35 => mul_35
#   sub_10 => sub_10
#   sub_11 => sub_11
#   sum_1 => sum_1
#   sum_2 => sum_2
#   view_51 => view_51
#   view_52 => view_52
# Graph fragment:
#   %mm_2 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_2]
#   %primals_52 : Tensor "f32[256][1]cuda:0" = PlaceHolder[target=primals_52]
#   %mul_28 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=mul_28]
#   %div : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=div]
#   %sum_1 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_1]
#   %sum_2 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_2]
#   %mul_35 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=mul_35]
#   %view_51 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [8, 128, 256]), kwargs = {})
#   %convert_element_type_104 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_51, torch.float32), kwargs = {})
#   %mul_31 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_104, %primals_52), kwargs = {})
#   %mul_32 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_31, 256), kwargs = {})
#   %sum_1 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_31, [2], True), kwargs = {})
#   %mul_33 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_31, %mul_28), kwargs = {})
#   %sum_2 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_33, [2], True), kwargs = {})
#   %mul_34 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_28, %sum_2), kwargs = {})
#   %sub_10 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_32, %sum_1), kwargs = {})
#   %sub_11 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_10, %mul_34), kwargs = {})
#   %mul_35 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div, %sub_11), kwargs = {})
#   %convert_element_type_106 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_35, torch.bfloat16), kwargs = {})
#   %view_52 : Tensor "bf16[1024, 256][256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_106, [1024, 256]), kwargs = {})
#   return %sum_1,%sum_2,%mul_35,%view_52
triton_per_fused__to_copy_native_layer_norm_backward_view_1 = async_compile.triton('triton_per_fused__to_copy_native_layer_norm_backward_view_1', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 256},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'out_ptr2': '*fp32', 'out_ptr3': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__to_copy_native_layer_norm_backward_view_1', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 4, 'num_store': 2, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 4096, 'r0_': 5768192}}
)
@triton.jit
def triton_per_fused__to_copy_native_layer_norm_backward_view_1(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr2, out_ptr3, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 256
    R0_BLOCK: tl.constexpr = 256
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 256*x0), xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr2 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp14 = tl.load(in_ptr3 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp1 * tmp2
    tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
    tmp6 = tl.where(xmask, tmp4, 0)
    tmp7 = tl.sum(tmp6, 1)[:, None].to(tl.float32)
    tmp9 = tmp3 * tmp8
    tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp12 = tl.where(xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None].to(tl.float32)
    tmp15 = tl.full([1, 1], 256.0, tl.float32)
    tmp16 = tmp3 * tmp15
    tmp17 = tmp16 - tmp7
    tmp18 = tmp8 * tmp13
    tmp19 = tmp17 - tmp18
    tmp20 = tmp14 * tmp19
    tmp21 = tmp20.to(tl.float32)
    tl.store(out_ptr2 + (r0_1 + 256*x0), tmp20, xmask)
    tl.store(out_ptr3 + (r0_1 + 256*x0), tmp21, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/yc/cyc5kku4d6b3lx4lm3mxywujjy74tyf67xmcz6f7g5pufoffaqpi.py
# Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_36, sum_3, sum_4], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
# Source node to ATen node mapping:
#   convert_element_type_104 => convert_element_type_104
#   mul_36 => mul_36
#   sum_3 => sum_3
#   sum_4 => sum_4
#   view_51 => view_51
# Graph fragment:
#   %mm_2 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_2]
#   %mul_28 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=mul_28]
#   %view_51 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [8, 128, 256]), kwargs = {})
#   %convert_element_type_104 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_51, torch.float32), kwargs = {})
#   %mul_36 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_104, %mul_28), kwargs = {})
#   %sum_3 : Tensor "f32[256][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_36, [0, 1]), kwargs = {})
#   %sum_4 : Tensor "f32[256][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%convert_element_type_104, [0, 1]), kwargs = {})
#   return %buf6,%buf8
triton_red_fused__to_copy_native_layer_norm_backward_view_2 = async_compile.triton('triton_red_fused__to_copy_native_layer_norm_backward_view_2', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 2048, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__to_copy_native_layer_norm_backward_view_2', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 2, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1605632, 'r0_': 0}}
)
@triton.jit
def triton_red_fused__to_copy_native_layer_norm_backward_view_2(in_ptr0, in_ptr1, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 256)
    x1 = xindex // 256
    _tmp5 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    _tmp8 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 256*r0_2 + 32768*x1), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp2 = tl.load(in_ptr1 + (x0 + 256*r0_2 + 32768*x1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp1 = tmp0.to(tl.float32)
        tmp3 = tmp1 * tmp2
        tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
        tmp6 = _tmp5 + tmp4
        _tmp5 = tl.where(r0_mask & xmask, tmp6, _tmp5)
        tmp7 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp9 = _tmp8 + tmp7
        _tmp8 = tl.where(r0_mask & xmask, tmp9, _tmp8)
    tmp5 = tl.sum(_tmp5, 1)[:, None]
    tmp8 = tl.sum(_tmp8, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp5, xmask)
    tl.store(out_ptr1 + (x3), tmp8, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/2l/c2lbt6b7hqslhdgkqou4p42m4wgoqbcnoz3sbqmold2cp6gjyn3m.py
# Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_36, sum_3], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
# Source node to ATen node mapping:
#   convert_element_type_104 => convert_element_type_104
#   mul_36 => mul_36
#   sum_3 => sum_3
#   view_51 => view_51
# Graph fragment:
#   %buf6 : Tensor "f32[256, 8][1, 256]cuda:0" = PlaceHolder[target=buf6]
#   %view_51 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_2, [8, 128, 256]), kwargs = {})
#   %convert_element_type_104 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_51, torch.float32), kwargs = {})
#   %mul_36 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_104, %mul_28), kwargs = {})
#   %sum_3 : Tensor "f32[256][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_36, [0, 1]), kwargs = {})
#   return %sum_3
triton_per_fused__to_copy_native_layer_norm_backward_view_3 = async_compile.triton('triton_per_fused__to_copy_native_layer_norm_backward_view_3', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 256, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER_TINY,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__to_copy_native_layer_norm_backward_view_3', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 10240, 'r0_': 0}}
)
@triton.jit
def triton_per_fused__to_copy_native_layer_norm_backward_view_3(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 256
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 256*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/od/cod4b7mc33m42qqtephainhewluvu5ldtpiu6djqxsa5bw2mb2v3.py
# Topologically Sorted Source Nodes: [sum_5], Original ATen: [aten.sum]
# Source node to ATen node mapping:
#   sum_5 => sum_5
# Graph fragment:
#   %view_52 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=view_52]
#   %sum_5 : Tensor "f32[1, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_52, [0], True), kwargs = {dtype: torch.float32})
#   return %buf13
triton_red_fused_sum_4 = async_compile.triton('triton_red_fused_sum_4', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 2048, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_sum_4', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 540672, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_sum_4(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 256)
    x1 = xindex // 256
    _tmp3 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 256*r0_2 + 32768*x1), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tmp0.to(tl.float32)
        tmp2 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp4 = _tmp3 + tmp2
        _tmp3 = tl.where(r0_mask & xmask, tmp4, _tmp3)
    tmp3 = tl.sum(_tmp3, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp3, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/n5/cn5dsiyas6a6mvnsqqfpv4xsz4qqqvzbktdk3kainsrlpger6csd.py
# Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, sum_6], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
# Source node to ATen node mapping:
#   add_32 => add_32
#   convert_element_type_114 => convert_element_type_114
#   convert_element_type_116 => convert_element_type_116
#   exp => exp
#   gelu_3 => add_27, convert_element_type_89, erf_3, mul_26
#   linear_14 => view_45
#   mul_38 => mul_38
#   mul_39 => mul_39
#   mul_40 => mul_40
#   mul_41 => mul_41
#   mul_42 => mul_42
#   mul_43 => mul_43
#   sum_6 => sum_6
#   view_54 => view_54
#   view_55 => view_55
# Graph fragment:
#   %mm_3 : Tensor "bf16[1024, 1024][1024, 1]cuda:0" = PlaceHolder[target=mm_3]
#   %addmm_14 : Tensor "bf16[1024, 1024][1024, 1]cuda:0" = PlaceHolder[target=addmm_14]
#   %convert_element_type_116 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0" = PlaceHolder[target=convert_element_type_116]
#   %view_54 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [8, 128, 1024]), kwargs = {})
#   %convert_element_type_114 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_54, torch.float32), kwargs = {})
#   %view_45 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_14, [8, 128, 1024]), kwargs = {})
#   %convert_element_type_89 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_45, torch.float32), kwargs = {})
#   %mul_26 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, 0.7071067811865476), kwargs = {})
#   %erf_3 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_26,), kwargs = {})
#   %add_27 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%erf_3, 1), kwargs = {})
#   %mul_38 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_27, 0.5), kwargs = {})
#   %mul_39 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, %convert_element_type_89), kwargs = {})
#   %mul_40 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_39, -0.5), kwargs = {})
#   %exp : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%mul_40,), kwargs = {})
#   %mul_41 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%exp, 0.3989422804014327), kwargs = {})
#   %mul_42 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, %mul_41), kwargs = {})
#   %add_32 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_38, %mul_42), kwargs = {})
#   %mul_43 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_114, %add_32), kwargs = {})
#   %convert_element_type_116 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_43, torch.bfloat16), kwargs = {})
#   %view_55 : Tensor "bf16[1024, 1024][1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_116, [1024, 1024]), kwargs = {})
#   %sum_6 : Tensor "f32[1, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_55, [0], True), kwargs = {dtype: torch.float32})
#   return %convert_element_type_116,%buf19
triton_red_fused_gelu_gelu_backward_sum_view_5 = async_compile.triton('triton_red_fused_gelu_gelu_backward_sum_view_5', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 8192, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*bf16', 'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_gelu_gelu_backward_sum_view_5', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 2, 'num_store': 2, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 8454144, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_gelu_gelu_backward_sum_view_5(in_out_ptr0, in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 8192
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 1024)
    x1 = xindex // 1024
    _tmp23 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_out_ptr0 + (x0 + 1024*r0_2 + 131072*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp2 = tl.load(in_ptr0 + (x0 + 1024*r0_2 + 131072*x1), r0_mask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp1 = tmp0.to(tl.float32)
        tmp3 = tmp2.to(tl.float32)
        tmp4 = tl.full([1, 1], 0.7071067811865476, tl.float32)
        tmp5 = tmp3 * tmp4
        tmp6 = libdevice.erf(tmp5)
        tmp7 = tl.full([1, 1], 1.0, tl.float32)
        tmp8 = tmp6 + tmp7
        tmp9 = tl.full([1, 1], 0.5, tl.float32)
        tmp10 = tmp8 * tmp9
        tmp11 = tmp3 * tmp3
        tmp12 = tl.full([1, 1], -0.5, tl.float32)
        tmp13 = tmp11 * tmp12
        tmp14 = libdevice.exp(tmp13)
        tmp15 = tl.full([1, 1], 0.3989422804014327, tl.float32)
        tmp16 = tmp14 * tmp15
        tmp17 = tmp3 * tmp16
        tmp18 = tmp10 + tmp17
        tmp19 = tmp1 * tmp18
        tmp20 = tmp19.to(tl.float32)
        tmp21 = tmp20.to(tl.float32)
        tmp22 = tl.broadcast_to(tmp21, [XBLOCK, R0_BLOCK])
        tmp24 = _tmp23 + tmp22
        _tmp23 = tl.where(r0_mask, tmp24, _tmp23)
        tl.store(in_out_ptr0 + (x0 + 1024*r0_2 + 131072*x1), tmp20, r0_mask)
    tmp23 = tl.sum(_tmp23, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp23, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/dg/cdgc4zkxfu3vd5vklqojtpfeprfinytbdyhbh56o5n7wmapw4rvm.py
# Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, sum_6], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
# Source node to ATen node mapping:
#   add_32 => add_32
#   convert_element_type_114 => convert_element_type_114
#   convert_element_type_116 => convert_element_type_116
#   exp => exp
#   gelu_3 => add_27, convert_element_type_89, erf_3, mul_26
#   linear_14 => view_45
#   mul_38 => mul_38
#   mul_39 => mul_39
#   mul_40 => mul_40
#   mul_41 => mul_41
#   mul_42 => mul_42
#   mul_43 => mul_43
#   sum_6 => sum_6
#   view_54 => view_54
#   view_55 => view_55
# Graph fragment:
#   %buf19 : Tensor "f32[1, 1024, 8][8192, 1, 1024]cuda:0" = PlaceHolder[target=buf19]
#   %view_54 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_3, [8, 128, 1024]), kwargs = {})
#   %convert_element_type_114 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_54, torch.float32), kwargs = {})
#   %view_45 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%addmm_14, [8, 128, 1024]), kwargs = {})
#   %convert_element_type_89 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_45, torch.float32), kwargs = {})
#   %mul_26 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, 0.7071067811865476), kwargs = {})
#   %erf_3 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.erf.default](args = (%mul_26,), kwargs = {})
#   %add_27 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%erf_3, 1), kwargs = {})
#   %mul_38 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%add_27, 0.5), kwargs = {})
#   %mul_39 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, %convert_element_type_89), kwargs = {})
#   %mul_40 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_39, -0.5), kwargs = {})
#   %exp : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.exp.default](args = (%mul_40,), kwargs = {})
#   %mul_41 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%exp, 0.3989422804014327), kwargs = {})
#   %mul_42 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_89, %mul_41), kwargs = {})
#   %add_32 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_38, %mul_42), kwargs = {})
#   %mul_43 : Tensor "f32[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_114, %add_32), kwargs = {})
#   %convert_element_type_116 : Tensor "bf16[8, 128, 1024][131072, 1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mul_43, torch.bfloat16), kwargs = {})
#   %view_55 : Tensor "bf16[1024, 1024][1024, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_116, [1024, 1024]), kwargs = {})
#   %sum_6 : Tensor "f32[1, 1024][1024, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_55, [0], True), kwargs = {dtype: torch.float32})
#   return %sum_6
triton_per_fused_gelu_gelu_backward_sum_view_6 = async_compile.triton('triton_per_fused_gelu_gelu_backward_sum_view_6', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_gelu_gelu_backward_sum_view_6', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 40960, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_gelu_gelu_backward_sum_view_6(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 1024*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/yb/cybxmt7rfz2oge66dac4fvw4qhaaxwuc5kborjstsq6f67bsxnov.py
# Topologically Sorted Source Nodes: [view_57, convert_element_type_122, mul_45, mul_46, sum_7, mul_47, sum_8, mul_48, sub_13, sub_14, mul_49, add_33, convert_element_type_125, view_58], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
# Source node to ATen node mapping:
#   add_33 => add_33
#   convert_element_type_122 => convert_element_type_122
#   convert_element_type_125 => convert_element_type_125
#   mul_45 => mul_45
#   mul_46 => mul_46
#   mul_47 => mul_47
#   mul_48 => mul_48
#   mul_49 => mul_49
#   sub_13 => sub_13
#   sub_14 => sub_14
#   sum_7 => sum_7
#   sum_8 => sum_8
#   view_57 => view_57
#   view_58 => view_58
# Graph fragment:
#   %mm_5 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_5]
#   %primals_46 : Tensor "f32[256][1]cuda:0" = PlaceHolder[target=primals_46]
#   %mul_23 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=mul_23]
#   %mul_35 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=mul_35]
#   %div_1 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=div_1]
#   %sum_7 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_7]
#   %sum_8 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_8]
#   %add_33 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=add_33]
#   %view_57 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_5, [8, 128, 256]), kwargs = {})
#   %convert_element_type_122 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_57, torch.float32), kwargs = {})
#   %mul_45 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_122, %primals_46), kwargs = {})
#   %mul_46 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_45, 256), kwargs = {})
#   %sum_7 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_45, [2], True), kwargs = {})
#   %mul_47 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_45, %mul_23), kwargs = {})
#   %sum_8 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_47, [2], True), kwargs = {})
#   %mul_48 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_23, %sum_8), kwargs = {})
#   %sub_13 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_46, %sum_7), kwargs = {})
#   %sub_14 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_13, %mul_48), kwargs = {})
#   %mul_49 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_1, %sub_14), kwargs = {})
#   %add_33 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul_35, %mul_49), kwargs = {})
#   %convert_element_type_125 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%add_33, torch.bfloat16), kwargs = {})
#   %view_58 : Tensor "bf16[1024, 256][256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%convert_element_type_125, [1024, 256]), kwargs = {})
#   return %sum_7,%sum_8,%add_33,%view_58
triton_per_fused__to_copy_add_native_layer_norm_backward_view_7 = async_compile.triton('triton_per_fused__to_copy_add_native_layer_norm_backward_view_7', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 256},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'out_ptr2': '*bf16', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__to_copy_add_native_layer_norm_backward_view_7', 'mutated_arg_names': ['in_out_ptr0'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 5, 'num_store': 2, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 4096, 'r0_': 6816768}}
)
@triton.jit
def triton_per_fused__to_copy_add_native_layer_norm_backward_view_7(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 256
    R0_BLOCK: tl.constexpr = 256
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (r0_1 + 256*x0), xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr2 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp14 = tl.load(in_out_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp15 = tl.load(in_ptr3 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp1 * tmp2
    tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
    tmp6 = tl.where(xmask, tmp4, 0)
    tmp7 = tl.sum(tmp6, 1)[:, None].to(tl.float32)
    tmp9 = tmp3 * tmp8
    tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
    tmp12 = tl.where(xmask, tmp10, 0)
    tmp13 = tl.sum(tmp12, 1)[:, None].to(tl.float32)
    tmp16 = tl.full([1, 1], 256.0, tl.float32)
    tmp17 = tmp3 * tmp16
    tmp18 = tmp17 - tmp7
    tmp19 = tmp8 * tmp13
    tmp20 = tmp18 - tmp19
    tmp21 = tmp15 * tmp20
    tmp22 = tmp14 + tmp21
    tmp23 = tmp22.to(tl.float32)
    tl.store(in_out_ptr0 + (r0_1 + 256*x0), tmp22, xmask)
    tl.store(out_ptr2 + (r0_1 + 256*x0), tmp23, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/db/cdbmetjofp2x7uuckw2cknnqtakco6b2jk5grdqmcmecswr6qpwo.py
# Topologically Sorted Source Nodes: [convert_element_type_131], Original ATen: [aten._to_copy]
# Source node to ATen node mapping:
#   convert_element_type_131 => convert_element_type_131
# Graph fragment:
#   %mm_8 : Tensor "bf16[256, 256][256, 1]cuda:0" = PlaceHolder[target=mm_8]
#   %convert_element_type_131 : Tensor "f32[256, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mm_8, torch.float32), kwargs = {})
#   return %convert_element_type_131
triton_poi_fused__to_copy_8 = async_compile.triton('triton_poi_fused__to_copy_8', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 65536}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__to_copy_8', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 655360}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__to_copy_8(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 65536
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp1, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/qv/cqvkyvw4ghqy364paw5xipf4fwk2jr6mcyd6twzqnpd2n577yhwk.py
# Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, sum_12], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
# Source node to ATen node mapping:
#   cat => cat
#   permute_50 => permute_50
#   permute_51 => permute_51
#   permute_52 => permute_52
#   sum_12 => sum_12
#   view_62 => view_62
#   view_63 => view_63
#   view_64 => view_64
#   view_65 => view_65
# Graph fragment:
#   %getitem_66 : Tensor "bf16[8, 4, 128, 64][32768, 64, 256, 1]cuda:0" = PlaceHolder[target=getitem_66]
#   %getitem_67 : Tensor "bf16[8, 4, 128, 64][32768, 64, 256, 1]cuda:0" = PlaceHolder[target=getitem_67]
#   %getitem_68 : Tensor "bf16[8, 4, 128, 64][32768, 64, 256, 1]cuda:0" = PlaceHolder[target=getitem_68]
#   %cat : Tensor "bf16[8, 128, 768][98304, 768, 1]cuda:0" = PlaceHolder[target=cat]
#   %permute_50 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_68, [0, 2, 1, 3]), kwargs = {})
#   %view_62 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_50, [8, 128, 256]), kwargs = {})
#   %permute_51 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_67, [0, 2, 1, 3]), kwargs = {})
#   %view_63 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_51, [8, 128, 256]), kwargs = {})
#   %permute_52 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_66, [0, 2, 1, 3]), kwargs = {})
#   %view_64 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_52, [8, 128, 256]), kwargs = {})
#   %cat : Tensor "bf16[8, 128, 768][98304, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%view_64, %view_63, %view_62], 2), kwargs = {})
#   %view_65 : Tensor "bf16[1024, 768][768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%cat, [1024, 768]), kwargs = {})
#   %sum_12 : Tensor "f32[1, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_65, [0], True), kwargs = {dtype: torch.float32})
#   return %cat,%buf42
triton_red_fused_cat_sum_transpose_view_9 = async_compile.triton('triton_red_fused_cat_sum_transpose_view_9', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 8192, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*bf16', 'in_ptr2': '*bf16', 'out_ptr0': '*bf16', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused_cat_sum_transpose_view_9', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 3, 'num_store': 2, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 4767744, 'r0_': 0}}
)
@triton.jit
def triton_red_fused_cat_sum_transpose_view_9(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 6144
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 768)
    x1 = xindex // 768
    _tmp19 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = x0
        tmp1 = tl.full([1, 1], 0, tl.int64)
        tmp2 = tmp0 >= tmp1
        tmp3 = tl.full([1, 1], 256, tl.int64)
        tmp4 = tmp0 < tmp3
        tmp5 = tl.load(in_ptr0 + (256*r0_2 + 32768*x1 + (x0)), r0_mask & tmp4 & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp6 = tmp0 >= tmp3
        tmp7 = tl.full([1, 1], 512, tl.int64)
        tmp8 = tmp0 < tmp7
        tmp9 = tmp6 & tmp8
        tmp10 = tl.load(in_ptr1 + (256*r0_2 + 32768*x1 + ((-256) + x0)), r0_mask & tmp9 & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp11 = tmp0 >= tmp7
        tmp12 = tl.full([1, 1], 768, tl.int64)
        tmp13 = tmp0 < tmp12
        tmp14 = tl.load(in_ptr2 + (256*r0_2 + 32768*x1 + ((-512) + x0)), r0_mask & tmp11 & xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)
        tmp15 = tl.where(tmp9, tmp10, tmp14)
        tmp16 = tl.where(tmp4, tmp5, tmp15)
        tmp17 = tmp16.to(tl.float32)
        tmp18 = tl.broadcast_to(tmp17, [XBLOCK, R0_BLOCK])
        tmp20 = _tmp19 + tmp18
        _tmp19 = tl.where(r0_mask & xmask, tmp20, _tmp19)
        tl.store(out_ptr0 + (x0 + 768*r0_2 + 98304*x1), tmp16, r0_mask & xmask)
    tmp19 = tl.sum(_tmp19, 1)[:, None]
    tl.store(out_ptr1 + (x3), tmp19, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/qg/cqgt5v3tygxmzr45f3ignbbkknfxevh6xdzplb54wx7gpfh2at4g.py
# Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, sum_12], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
# Source node to ATen node mapping:
#   cat => cat
#   permute_50 => permute_50
#   permute_51 => permute_51
#   permute_52 => permute_52
#   sum_12 => sum_12
#   view_62 => view_62
#   view_63 => view_63
#   view_64 => view_64
#   view_65 => view_65
# Graph fragment:
#   %buf42 : Tensor "f32[1, 768, 8][6144, 1, 768]cuda:0" = PlaceHolder[target=buf42]
#   %permute_50 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_68, [0, 2, 1, 3]), kwargs = {})
#   %view_62 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_50, [8, 128, 256]), kwargs = {})
#   %permute_51 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_67, [0, 2, 1, 3]), kwargs = {})
#   %view_63 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_51, [8, 128, 256]), kwargs = {})
#   %permute_52 : Tensor "bf16[8, 128, 4, 64][32768, 256, 64, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.permute.default](args = (%getitem_66, [0, 2, 1, 3]), kwargs = {})
#   %view_64 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%permute_52, [8, 128, 256]), kwargs = {})
#   %cat : Tensor "bf16[8, 128, 768][98304, 768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%view_64, %view_63, %view_62], 2), kwargs = {})
#   %view_65 : Tensor "bf16[1024, 768][768, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.reshape.default](args = (%cat, [1024, 768]), kwargs = {})
#   %sum_12 : Tensor "f32[1, 768][768, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%view_65, [0], True), kwargs = {dtype: torch.float32})
#   return %sum_12
triton_per_fused_cat_sum_transpose_view_10 = async_compile.triton('triton_per_fused_cat_sum_transpose_view_10', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 8},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_cat_sum_transpose_view_10', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 30720, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_cat_sum_transpose_view_10(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 768
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0 + 768*r0_1), xmask, other=0.0)
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.where(xmask, tmp1, 0)
    tmp4 = tl.sum(tmp3, 1)[:, None].to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp4, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/h2/ch27tdxdbiz4pccr4u5w3nvxw2c64e5ek4f5ladekejo6ey7mhit.py
# Topologically Sorted Source Nodes: [convert_element_type_139], Original ATen: [aten._to_copy]
# Source node to ATen node mapping:
#   convert_element_type_139 => convert_element_type_139
# Graph fragment:
#   %mm_10 : Tensor "bf16[768, 256][256, 1]cuda:0" = PlaceHolder[target=mm_10]
#   %convert_element_type_139 : Tensor "f32[768, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%mm_10, torch.float32), kwargs = {})
#   return %convert_element_type_139
triton_poi_fused__to_copy_11 = async_compile.triton('triton_poi_fused__to_copy_11', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 262144}, 
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused__to_copy_11', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 1, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1966080}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused__to_copy_11(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 196608
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.load(in_ptr0 + (x0), None).to(tl.float32)
    tmp1 = tmp0.to(tl.float32)
    tl.store(out_ptr0 + (x0), tmp1, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/65/c652pr7lzf35snf2i3a6v5pmy2zxqwth3hvjvdjoazfhgpdkjzas.py
# Topologically Sorted Source Nodes: [full_1], Original ATen: [aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   full_1 => full_default_3
# Graph fragment:
#   %full_default_3 : Tensor "f32[1024, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([1024, 256], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   return %index_put_1
triton_poi_fused_embedding_dense_backward_12 = async_compile.triton('triton_poi_fused_embedding_dense_backward_12', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 262144}, 
    filename=__file__,
    triton_meta={'signature': {'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_embedding_dense_backward_12', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 0, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 2097152}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_embedding_dense_backward_12(out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 262144
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.full([1], 0.0, tl.float32)
    tl.store(out_ptr0 + (x0), tmp0, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/5u/c5usalsut6hcohr4qeqh66ls2n2ckyhaaqgbbvfju5uezscz5xri.py
# Topologically Sorted Source Nodes: [view_115, convert_element_type_243, mul_115, mul_116, sum_49, x, layer_norm, mul_117, sum_50, mul_118, sub_34, sub_35, div_8, mul_119, add_46, scalar_tensor, eq_1, unsqueeze_1, where_1, full_1, index_put_1], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm, aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   add_46 => add_46
#   convert_element_type_243 => convert_element_type_243
#   div_8 => div_8
#   eq_1 => eq_1
#   full_1 => full_default_3
#   index_put_1 => index_put_1
#   layer_norm => mul, sub
#   mul_115 => mul_115
#   mul_116 => mul_116
#   mul_117 => mul_117
#   mul_118 => mul_118
#   mul_119 => mul_119
#   scalar_tensor => full_default
#   sub_34 => sub_34
#   sub_35 => sub_35
#   sum_49 => sum_49
#   sum_50 => sum_50
#   unsqueeze_1 => unsqueeze_1
#   view_115 => view_115
#   where_1 => where_1
#   x => add
# Graph fragment:
#   %mm_33 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_33]
#   %primals_4 : Tensor "f32[256][1]cuda:0" = PlaceHolder[target=primals_4]
#   %embedding : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=embedding]
#   %embedding_1 : Tensor "f32[128, 256][256, 1]cuda:0" = PlaceHolder[target=embedding_1]
#   %getitem_1 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=getitem_1]
#   %rsqrt : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %add_45 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=add_45]
#   %sum_49 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_49]
#   %sum_50 : Tensor "f32[8, 128, 1][128, 1, 1024]cuda:0" = PlaceHolder[target=sum_50]
#   %primals_2 : Tensor "i64[8, 128][128, 1]cuda:0" = PlaceHolder[target=primals_2]
#   %add_46 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=add_46]
#   %index_put_1 : Tensor "f32[1024, 256][256, 1]cuda:0" = PlaceHolder[target=index_put_1]
#   %view_115 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_33, [8, 128, 256]), kwargs = {})
#   %convert_element_type_243 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_115, torch.float32), kwargs = {})
#   %mul_115 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_243, %primals_4), kwargs = {})
#   %mul_116 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_115, 256), kwargs = {})
#   %sum_49 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_115, [2], True), kwargs = {})
#   %add : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %embedding_1), kwargs = {})
#   %sub : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add, %getitem_1), kwargs = {})
#   %mul : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_117 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul_115, %mul), kwargs = {})
#   %sum_50 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_117, [2], True), kwargs = {})
#   %mul_118 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%mul, %sum_50), kwargs = {})
#   %sub_34 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%mul_116, %sum_49), kwargs = {})
#   %sub_35 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%sub_34, %mul_118), kwargs = {})
#   %div_8 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.div.Tensor](args = (%rsqrt, 256), kwargs = {})
#   %mul_119 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%div_8, %sub_35), kwargs = {})
#   %add_46 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%add_45, %mul_119), kwargs = {})
#   %full_default : Tensor "f32[][]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.full.default](args = ([], 0.0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %eq_1 : Tensor "b8[8, 128][128, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.eq.Scalar](args = (%primals_2, -1), kwargs = {})
#   %unsqueeze_1 : Tensor "b8[8, 128, 1][128, 1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%eq_1, -1), kwargs = {})
#   %where_1 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.where.self](args = (%unsqueeze_1, %full_default, %add_46), kwargs = {})
#   %full_default_3 : Tensor "f32[1024, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([1024, 256], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %index_put_1 : Tensor "f32[1024, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.index_put_.default](args = (%full_default_3, [%primals_2], %where_1, True), kwargs = {})
#   return %sum_49,%sum_50,%add_46,%buf182
triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13 = async_compile.triton('triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 1024, 'r0_': 256},
    reduction_hint=ReductionHint.INNER,
    filename=__file__,
    triton_meta={'signature': {'in_out_ptr0': '*fp32', 'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'in_ptr5': '*fp32', 'in_ptr6': '*i64', 'out_ptr2': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]], (9,): [['tt.divisibility', 16]], (10,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13', 'mutated_arg_names': ['in_out_ptr0', 'out_ptr2'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': True, 'num_load': 8, 'num_store': 2, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 16384, 'r0_': 4850688}}
)
@triton.jit
def triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13(in_out_ptr0, in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, in_ptr5, in_ptr6, out_ptr2, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 256
    R0_BLOCK: tl.constexpr = 256
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    x2 = (xindex % 128)
    tmp0 = tl.load(in_ptr0 + (r0_1 + 256*x0), xmask, other=0.0).to(tl.float32)
    tmp2 = tl.load(in_ptr1 + (r0_1), None, eviction_policy='evict_last')
    tmp8 = tl.load(in_ptr2 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp9 = tl.load(in_ptr3 + (r0_1 + 256*x2), xmask, eviction_policy='evict_last', other=0.0)
    tmp11 = tl.load(in_ptr4 + (x0), xmask, eviction_policy='evict_last')
    tmp13 = tl.load(in_ptr5 + (x0), xmask, eviction_policy='evict_last')
    tmp20 = tl.load(in_out_ptr0 + (r0_1 + 256*x0), xmask, other=0.0)
    tmp30 = tl.load(in_ptr6 + (x0), xmask, eviction_policy='evict_last')
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tmp1 * tmp2
    tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])
    tmp6 = tl.where(xmask, tmp4, 0)
    tmp7 = tl.sum(tmp6, 1)[:, None].to(tl.float32)
    tmp10 = tmp8 + tmp9
    tmp12 = tmp10 - tmp11
    tmp14 = tmp12 * tmp13
    tmp15 = tmp3 * tmp14
    tmp16 = tl.broadcast_to(tmp15, [XBLOCK, R0_BLOCK])
    tmp18 = tl.where(xmask, tmp16, 0)
    tmp19 = tl.sum(tmp18, 1)[:, None].to(tl.float32)
    tmp21 = tl.full([1, 1], 0.00390625, tl.float32)
    tmp22 = tmp13 * tmp21
    tmp23 = tl.full([1, 1], 256.0, tl.float32)
    tmp24 = tmp3 * tmp23
    tmp25 = tmp24 - tmp7
    tmp26 = tmp14 * tmp19
    tmp27 = tmp25 - tmp26
    tmp28 = tmp22 * tmp27
    tmp29 = tmp20 + tmp28
    tmp31 = tl.full([1, 1], 1024, tl.int32)
    tmp32 = tmp30 + tmp31
    tmp33 = tmp30 < 0
    tmp34 = tl.where(tmp33, tmp32, tmp30)
    tl.device_assert(((0 <= tmp34) & (tmp34 < 1024)) | ~(xmask), "index out of bounds: 0 <= tmp34 < 1024")
    tmp36 = tl.full([1, 1], -1, tl.int64)
    tmp37 = tmp30 == tmp36
    tmp38 = tl.full([1, 1], 0.0, tl.float32)
    tmp39 = tl.where(tmp37, tmp38, tmp29)
    tl.store(in_out_ptr0 + (r0_1 + 256*x0), tmp29, xmask)
    tl.atomic_add(out_ptr2 + (tl.broadcast_to(r0_1 + 256*tmp34, [XBLOCK, R0_BLOCK])), tmp39, xmask, sem='relaxed')
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/3p/c3pzunieow4hcknip5h5jpgddkxhwv24n7bt63jknciwatdscofy.py
# Topologically Sorted Source Nodes: [view_115, convert_element_type_243, x, layer_norm, mul_120, sum_51, sum_52], Original ATen: [aten.view, aten._to_copy, aten.add, aten.native_layer_norm, aten.native_layer_norm_backward]
# Source node to ATen node mapping:
#   convert_element_type_243 => convert_element_type_243
#   layer_norm => mul, sub
#   mul_120 => mul_120
#   sum_51 => sum_51
#   sum_52 => sum_52
#   view_115 => view_115
#   x => add
# Graph fragment:
#   %mm_33 : Tensor "bf16[1024, 256][256, 1]cuda:0" = PlaceHolder[target=mm_33]
#   %embedding : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=embedding]
#   %embedding_1 : Tensor "f32[128, 256][256, 1]cuda:0" = PlaceHolder[target=embedding_1]
#   %getitem_1 : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=getitem_1]
#   %rsqrt : Tensor "f32[8, 128, 1][128, 1, 1]cuda:0" = PlaceHolder[target=rsqrt]
#   %view_115 : Tensor "bf16[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%mm_33, [8, 128, 256]), kwargs = {})
#   %convert_element_type_243 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.prims.convert_element_type.default](args = (%view_115, torch.float32), kwargs = {})
#   %add : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%embedding, %embedding_1), kwargs = {})
#   %sub : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sub.Tensor](args = (%add, %getitem_1), kwargs = {})
#   %mul : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=3] = call_function[target=torch.ops.aten.mul.Tensor](args = (%sub, %rsqrt), kwargs = {})
#   %mul_120 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%convert_element_type_243, %mul), kwargs = {})
#   %sum_51 : Tensor "f32[256][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%mul_120, [0, 1]), kwargs = {})
#   %sum_52 : Tensor "f32[256][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%convert_element_type_243, [0, 1]), kwargs = {})
#   return %buf173,%buf175
triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14 = async_compile.triton('triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.reduction(
    size_hints={'x': 2048, 'r0_': 128},
    reduction_hint=ReductionHint.OUTER,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*bf16', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'in_ptr4': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr', 'R0_BLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]], (4,): [['tt.divisibility', 16]], (5,): [['tt.divisibility', 16]], (6,): [['tt.divisibility', 16]], (7,): [['tt.divisibility', 16]], (8,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 5, 'num_store': 2, 'num_reduction': 2, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1736704, 'r0_': 8192}}
)
@triton.jit
def triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14(in_ptr0, in_ptr1, in_ptr2, in_ptr3, in_ptr4, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    xnumel = 2048
    r0_numel = 128
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    r0_base = tl.arange(0, R0_BLOCK)[None, :]
    rbase = r0_base
    x0 = (xindex % 256)
    x1 = xindex // 256
    _tmp11 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    x3 = xindex
    _tmp14 = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)
    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base
        r0_mask = r0_index < r0_numel
        roffset = r0_offset
        rindex = r0_index
        r0_2 = r0_index
        tmp0 = tl.load(in_ptr0 + (x0 + 256*r0_2 + 32768*x1), r0_mask & xmask, eviction_policy='evict_first', other=0.0).to(tl.float32)
        tmp2 = tl.load(in_ptr1 + (x0 + 256*r0_2 + 32768*x1), r0_mask & xmask, eviction_policy='evict_first', other=0.0)
        tmp3 = tl.load(in_ptr2 + (x0 + 256*r0_2), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp5 = tl.load(in_ptr3 + (r0_2 + 128*x1), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp7 = tl.load(in_ptr4 + (r0_2 + 128*x1), r0_mask & xmask, eviction_policy='evict_last', other=0.0)
        tmp1 = tmp0.to(tl.float32)
        tmp4 = tmp2 + tmp3
        tmp6 = tmp4 - tmp5
        tmp8 = tmp6 * tmp7
        tmp9 = tmp1 * tmp8
        tmp10 = tl.broadcast_to(tmp9, [XBLOCK, R0_BLOCK])
        tmp12 = _tmp11 + tmp10
        _tmp11 = tl.where(r0_mask & xmask, tmp12, _tmp11)
        tmp13 = tl.broadcast_to(tmp1, [XBLOCK, R0_BLOCK])
        tmp15 = _tmp14 + tmp13
        _tmp14 = tl.where(r0_mask & xmask, tmp15, _tmp14)
    tmp11 = tl.sum(_tmp11, 1)[:, None]
    tmp14 = tl.sum(_tmp14, 1)[:, None]
    tl.store(out_ptr0 + (x3), tmp11, xmask)
    tl.store(out_ptr1 + (x3), tmp14, xmask)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/p3/cp3kua53rkudtgjidkuzuxmh6s6sqrylved3q67e55q5enntyhqc.py
# Topologically Sorted Source Nodes: [full], Original ATen: [aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   full => full_default_1
# Graph fragment:
#   %full_default_1 : Tensor "f32[128, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([128, 256], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   return %index_put
triton_poi_fused_embedding_dense_backward_15 = async_compile.triton('triton_poi_fused_embedding_dense_backward_15', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 32768}, 
    filename=__file__,
    triton_meta={'signature': {'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_poi_fused_embedding_dense_backward_15', 'mutated_arg_names': [], 'optimize_mem': True, 'no_x_dim': False, 'atomic_add_found': False, 'num_load': 0, 'num_store': 1, 'num_reduction': 0, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 262144}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_embedding_dense_backward_15(out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 32768
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = tl.full([XBLOCK], True, tl.int1)[:]
    x0 = xindex
    tmp0 = tl.full([1], 0.0, tl.float32)
    tl.store(out_ptr0 + (x0), tmp0, None)
''', device_str='cuda')


# kernel path: /tmp/torchinductor_root/tmpjmo3ra83/jt/cjtlzhjpar65rlm3qnoote7q7posgh4y25bc23bicwnmo2uhvzvx.py
# Topologically Sorted Source Nodes: [sum_53, view_116, eq, unsqueeze, scalar_tensor, where, full, index_put], Original ATen: [aten.sum, aten.view, aten.embedding_dense_backward]
# Source node to ATen node mapping:
#   eq => eq
#   full => full_default_1
#   index_put => index_put
#   scalar_tensor => full_default
#   sum_53 => sum_53
#   unsqueeze => unsqueeze
#   view_116 => view_116
#   where => where
# Graph fragment:
#   %add_46 : Tensor "f32[8, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=add_46]
#   %iota : Tensor "i64[128][1]cuda:0" = PlaceHolder[target=iota]
#   %sum_53 : Tensor "f32[1, 128, 256][32768, 256, 1]cuda:0" = PlaceHolder[target=sum_53]
#   %index_put : Tensor "f32[128, 256][256, 1]cuda:0" = PlaceHolder[target=index_put]
#   %sum_53 : Tensor "f32[1, 128, 256][32768, 256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%add_46, [0], True), kwargs = {dtype: torch.float32})
#   %view_116 : Tensor "f32[128, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.reshape.default](args = (%sum_53, [128, 256]), kwargs = {})
#   %eq : Tensor "b8[128][1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.eq.Scalar](args = (%iota, -1), kwargs = {})
#   %unsqueeze : Tensor "b8[128, 1][1, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default](args = (%eq, -1), kwargs = {})
#   %full_default : Tensor "f32[][]cuda:0"[num_users=2] = call_function[target=torch.ops.aten.full.default](args = ([], 0.0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %where : Tensor "f32[128, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.where.self](args = (%unsqueeze, %full_default, %view_116), kwargs = {})
#   %full_default_1 : Tensor "f32[128, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([128, 256], 0), kwargs = {dtype: torch.float32, layout: torch.strided, device: cuda:0, pin_memory: False})
#   %index_put : Tensor "f32[128, 256][256, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.index_put_.default](args = (%full_default_1, [%iota], %where, True), kwargs = {})
#   return %sum_53,%buf180
triton_per_fused_embedding_dense_backward_sum_view_16 = async_compile.triton('triton_per_fused_embedding_dense_backward_sum_view_16', '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 32768, 'r0_': 8},
    reduction_hint=ReductionHint.DEFAULT,
    filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'in_ptr1': '*i64', 'out_ptr1': '*fp32', 'xnumel': 'i32', 'r0_numel': 'i32', 'XBLOCK': 'constexpr'}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32), 'constants': {}, 'native_matmul': False, 'enable_fp_fusion': True, 'launch_pdl': False, 'disable_ftz': False, 'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]], (2,): [['tt.divisibility', 16]], (3,): [['tt.divisibility', 16]]}]},
    inductor_meta={'grid_type': 'Grid1D', 'autotune_hints': set(), 'kernel_name': 'triton_per_fused_embedding_dense_backward_sum_view_16', 'mutated_arg_names': ['out_ptr1'], 'optimize_mem': True, 'no_x_dim': None, 'atomic_add_found': True, 'num_load': 2, 'num_store': 1, 'num_reduction': 1, 'backend_hash': '91D1D1166449D9E2EB66EB9770C9E2C3B0FEB787341F27FEB4D3F0338DA50336', 'assert_indirect_indexing': True, 'autotune_local_cache': True, 'autotune_pointwise': True, 'autotune_remote_cache': None, 'force_disable_caches': True, 'dynamic_scale_rblock': True, 'max_autotune': False, 'max_autotune_pointwise': False, 'min_split_scan_rblock': 256, 'spill_threshold': 16, 'store_cubin': False, 'deterministic': False, 'force_filter_reduction_configs': False, 'mix_order_reduction_allow_multi_stages': False, 'are_deterministic_algorithms_enabled': False, 'tiling_scores': {'x': 1048576, 'r0_': 0}}
)
@triton.jit
def triton_per_fused_embedding_dense_backward_sum_view_16(in_ptr0, in_ptr1, out_ptr1, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 32768
    r0_numel = 8
    R0_BLOCK: tl.constexpr = 8
    rnumel = r0_numel
    RBLOCK: tl.constexpr = R0_BLOCK
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    xmask = tl.full([XBLOCK], True, tl.int1)[:, None]
    r0_index = tl.arange(0, R0_BLOCK)[None, :]
    r0_offset = 0
    r0_mask = tl.full([R0_BLOCK], True, tl.int1)[None, :]
    roffset = r0_offset
    rindex = r0_index
    r0_1 = r0_index
    x0 = xindex
    x3 = xindex // 256
    x2 = (xindex % 256)
    tmp0 = tl.load(in_ptr0 + (x0 + 32768*r0_1), None)
    tmp4 = tl.load(in_ptr1 + (x3), None, eviction_policy='evict_last')
    tmp1 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])
    tmp3 = tl.sum(tmp1, 1)[:, None].to(tl.float32)
    tmp5 = tl.full([1, 1], 128, tl.int32)
    tmp6 = tmp4 + tmp5
    tmp7 = tmp4 < 0
    tmp8 = tl.where(tmp7, tmp6, tmp4)
    tl.device_assert((0 <= tmp8) & (tmp8 < 128), "index out of bounds: 0 <= tmp8 < 128")
    tmp10 = tl.full([1, 1], -1, tl.int64)
    tmp11 = tmp4 == tmp10
    tmp12 = tl.full([1, 1], 0.0, tl.float32)
    tmp13 = tl.where(tmp11, tmp12, tmp3)
    tl.atomic_add(out_ptr1 + (x2 + 256*tmp8), tmp13, None, sem='relaxed')
''', device_str='cuda')

def partition_0(args):
    tangents_1, view_48, permute_35, primals_52, mul_28, div, permute_37, view_46, addmm_14, permute_41, view_44, primals_46, mul_23, div_1, permute_45, getitem_53, permute_25, permute_26, permute_27, getitem_54, getitem_59, getitem_60, permute_53, view_36, primals_40, mul_21, div_2, permute_57, view_34, addmm_10, permute_61, view_32, primals_34, mul_16, div_3, permute_65, getitem_37, permute_17, permute_18, permute_19, getitem_38, getitem_43, getitem_44, permute_73, view_24, primals_28, mul_14, div_4, permute_77, view_22, addmm_6, permute_81, view_20, primals_22, mul_9, div_5, permute_85, getitem_21, permute_9, permute_10, permute_11, getitem_22, getitem_27, getitem_28, permute_93, view_12, primals_16, mul_7, div_6, permute_97, view_10, addmm_2, permute_101, view_8, primals_10, mul_2, div_7, permute_105, getitem_5, permute_1, permute_2, permute_3, getitem_6, getitem_11, getitem_12, permute_113, view, primals_4, embedding, embedding_1, getitem_1, rsqrt, primals_2, iota = args
    args.clear()
    assert_size_stride(tangents_1, (8, 128, 1024), (131072, 1024, 1))
    assert_size_stride(view_48, (1024, 256), (256, 1))
    assert_size_stride(permute_35, (1024, 256), (256, 1))
    assert_size_stride(primals_52, (256, ), (1, ))
    assert_size_stride(mul_28, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_37, (256, 1024), (1024, 1))
    assert_size_stride(view_46, (1024, 1024), (1024, 1))
    assert_size_stride(addmm_14, (1024, 1024), (1024, 1))
    assert_size_stride(permute_41, (1024, 256), (256, 1))
    assert_size_stride(view_44, (1024, 256), (256, 1))
    assert_size_stride(primals_46, (256, ), (1, ))
    assert_size_stride(mul_23, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_1, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_45, (256, 256), (256, 1))
    assert_size_stride(getitem_53, (8, 4, 128, 64), (32768, 64, 256, 1))
    assert_size_stride(permute_25, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_26, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_27, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(getitem_54, (8, 4, 128, 1), (512, 128, 1, 1))
    assert_size_stride(getitem_59, (), ())
    assert_size_stride(getitem_60, (), ())
    assert_size_stride(permute_53, (768, 256), (256, 1))
    assert_size_stride(view_36, (1024, 256), (256, 1))
    assert_size_stride(primals_40, (256, ), (1, ))
    assert_size_stride(mul_21, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_2, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_57, (256, 1024), (1024, 1))
    assert_size_stride(view_34, (1024, 1024), (1024, 1))
    assert_size_stride(addmm_10, (1024, 1024), (1024, 1))
    assert_size_stride(permute_61, (1024, 256), (256, 1))
    assert_size_stride(view_32, (1024, 256), (256, 1))
    assert_size_stride(primals_34, (256, ), (1, ))
    assert_size_stride(mul_16, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_3, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_65, (256, 256), (256, 1))
    assert_size_stride(getitem_37, (8, 4, 128, 64), (32768, 64, 256, 1))
    assert_size_stride(permute_17, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_18, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_19, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(getitem_38, (8, 4, 128, 1), (512, 128, 1, 1))
    assert_size_stride(getitem_43, (), ())
    assert_size_stride(getitem_44, (), ())
    assert_size_stride(permute_73, (768, 256), (256, 1))
    assert_size_stride(view_24, (1024, 256), (256, 1))
    assert_size_stride(primals_28, (256, ), (1, ))
    assert_size_stride(mul_14, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_4, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_77, (256, 1024), (1024, 1))
    assert_size_stride(view_22, (1024, 1024), (1024, 1))
    assert_size_stride(addmm_6, (1024, 1024), (1024, 1))
    assert_size_stride(permute_81, (1024, 256), (256, 1))
    assert_size_stride(view_20, (1024, 256), (256, 1))
    assert_size_stride(primals_22, (256, ), (1, ))
    assert_size_stride(mul_9, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_5, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_85, (256, 256), (256, 1))
    assert_size_stride(getitem_21, (8, 4, 128, 64), (32768, 64, 256, 1))
    assert_size_stride(permute_9, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_10, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_11, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(getitem_22, (8, 4, 128, 1), (512, 128, 1, 1))
    assert_size_stride(getitem_27, (), ())
    assert_size_stride(getitem_28, (), ())
    assert_size_stride(permute_93, (768, 256), (256, 1))
    assert_size_stride(view_12, (1024, 256), (256, 1))
    assert_size_stride(primals_16, (256, ), (1, ))
    assert_size_stride(mul_7, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_6, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_97, (256, 1024), (1024, 1))
    assert_size_stride(view_10, (1024, 1024), (1024, 1))
    assert_size_stride(addmm_2, (1024, 1024), (1024, 1))
    assert_size_stride(permute_101, (1024, 256), (256, 1))
    assert_size_stride(view_8, (1024, 256), (256, 1))
    assert_size_stride(primals_10, (256, ), (1, ))
    assert_size_stride(mul_2, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(div_7, (8, 128, 1), (128, 1, 1))
    assert_size_stride(permute_105, (256, 256), (256, 1))
    assert_size_stride(getitem_5, (8, 4, 128, 64), (32768, 64, 256, 1))
    assert_size_stride(permute_1, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_2, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(permute_3, (8, 4, 128, 64), (98304, 64, 768, 1))
    assert_size_stride(getitem_6, (8, 4, 128, 1), (512, 128, 1, 1))
    assert_size_stride(getitem_11, (), ())
    assert_size_stride(getitem_12, (), ())
    assert_size_stride(permute_113, (768, 256), (256, 1))
    assert_size_stride(view, (1024, 256), (256, 1))
    assert_size_stride(primals_4, (256, ), (1, ))
    assert_size_stride(embedding, (8, 128, 256), (32768, 256, 1))
    assert_size_stride(embedding_1, (128, 256), (256, 1))
    assert_size_stride(getitem_1, (8, 128, 1), (128, 1, 1))
    assert_size_stride(rsqrt, (8, 128, 1), (128, 1, 1))
    assert_size_stride(primals_2, (8, 128), (128, 1))
    assert_size_stride(iota, (128, ), (1, ))
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((1024, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [view_50, permute_33, permute_36], Original ATen: [aten.view, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:127
        extern_kernels.mm(reinterpret_tensor(tangents_1, (1024, 1024), (1, 1024), 0), view_48, out=buf0)
        del view_48
        buf1 = empty_strided_cuda((1024, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [view_50, mm_2], Original ATen: [aten.view, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:128
        extern_kernels.mm(reinterpret_tensor(tangents_1, (1024, 1024), (1024, 1), 0), permute_35, out=buf1)
        del permute_35
        del tangents_1
        buf2 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_105], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:129
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf0, buf2, 262144, stream=stream0)
        buf5 = empty_strided_cuda((8, 128, 256), (32768, 256, 1), torch.float32)
        buf10 = buf0; del buf0  # reuse
        # Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_31, mul_32, sum_1, mul_33, sum_2, mul_34, sub_10, sub_11, mul_35, convert_element_type_106, view_52], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_1:130
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_1.run(buf1, primals_52, mul_28, div, buf5, buf10, 1024, 256, stream=stream0)
        del div
        del primals_52
        buf6 = empty_strided_cuda((256, 8), (1, 256), torch.float32)
        buf8 = empty_strided_cuda((256, 8), (1, 256), torch.float32)
        # Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_36, sum_3, sum_4], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:131
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf1, mul_28, buf6, buf8, 2048, 128, stream=stream0)
        del buf1
        del mul_28
        buf7 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_51, convert_element_type_104, mul_36, sum_3], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:132
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf6, buf7, 256, 8, stream=stream0)
        del buf6
        buf9 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_51, convert_element_type_104, sum_4], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:133
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf8, buf9, 256, 8, stream=stream0)
        buf11 = empty_strided_cuda((1024, 1024), (1024, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [mm_3], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:134
        extern_kernels.mm(buf10, permute_37, out=buf11)
        del permute_37
        buf12 = empty_strided_cuda((256, 1024), (1024, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [permute_38, permute_40], Original ATen: [aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:135
        extern_kernels.mm(reinterpret_tensor(buf10, (256, 1024), (1, 256), 0), view_46, out=buf12)
        del view_46
        buf13 = reinterpret_tensor(buf8, (1, 256, 8), (2048, 1, 256), 0); del buf8  # reuse
        # Topologically Sorted Source Nodes: [sum_5], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:136
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf10, buf13, 2048, 128, stream=stream0)
        del buf10
        buf14 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_5], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:137
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf13, buf14, 256, 8, stream=stream0)
        del buf13
        buf15 = empty_strided_cuda((256, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_112], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:138
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf12, buf15, 262144, stream=stream0)
        del buf12
        buf16 = reinterpret_tensor(buf11, (8, 128, 1024), (131072, 1024, 1), 0); del buf11  # reuse
        buf19 = empty_strided_cuda((1, 1024, 8), (8192, 1, 1024), torch.float32)
        # Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, sum_6], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_red_fused_gelu_gelu_backward_sum_view_5:139
        stream0 = get_raw_stream(0)
        triton_red_fused_gelu_gelu_backward_sum_view_5.run(buf16, addmm_14, buf19, 8192, 128, stream=stream0)
        del addmm_14
        buf17 = empty_strided_cuda((1024, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, mm_5], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:140
        extern_kernels.mm(reinterpret_tensor(buf16, (1024, 1024), (1024, 1), 0), permute_41, out=buf17)
        del permute_41
        buf18 = empty_strided_cuda((1024, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, permute_42, permute_44], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:141
        extern_kernels.mm(reinterpret_tensor(buf16, (1024, 1024), (1, 1024), 0), view_44, out=buf18)
        del view_44
        buf20 = empty_strided_cuda((1, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [view_54, convert_element_type_114, linear_14, gelu_3, mul_38, mul_39, mul_40, exp, mul_41, mul_42, add_32, mul_43, convert_element_type_116, view_55, sum_6], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_per_fused_gelu_gelu_backward_sum_view_6:142
        stream0 = get_raw_stream(0)
        triton_per_fused_gelu_gelu_backward_sum_view_6.run(buf19, buf20, 1024, 8, stream=stream0)
        buf21 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_123], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:143
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf18, buf21, 262144, stream=stream0)
        buf28 = buf5; del buf5  # reuse
        buf29 = buf18; del buf18  # reuse
        # Topologically Sorted Source Nodes: [view_57, convert_element_type_122, mul_45, mul_46, sum_7, mul_47, sum_8, mul_48, sub_13, sub_14, mul_49, add_33, convert_element_type_125, view_58], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:144
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf28, buf17, primals_46, mul_23, div_1, buf29, 1024, 256, stream=stream0)
        del div_1
        del primals_46
        buf24 = empty_strided_cuda((256, 8), (1, 256), torch.float32)
        buf26 = empty_strided_cuda((256, 8), (1, 256), torch.float32)
        # Topologically Sorted Source Nodes: [view_57, convert_element_type_122, mul_50, sum_9, sum_10], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:145
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf17, mul_23, buf24, buf26, 2048, 128, stream=stream0)
        del mul_23
        buf25 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_57, convert_element_type_122, mul_50, sum_9], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:146
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf24, buf25, 256, 8, stream=stream0)
        buf27 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_57, convert_element_type_122, sum_10], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:147
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf26, buf27, 256, 8, stream=stream0)
        buf30 = buf17; del buf17  # reuse
        # Topologically Sorted Source Nodes: [mm_7], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:148
        extern_kernels.mm(buf29, permute_45, out=buf30)
        del permute_45
        buf31 = empty_strided_cuda((256, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [permute_46, transpose_15, reshape_3, linear_13, permute_48], Original ATen: [aten.t, aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:149
        extern_kernels.mm(reinterpret_tensor(buf29, (256, 1024), (1, 256), 0), reinterpret_tensor(getitem_53, (1024, 256), (256, 1), 0), out=buf31)
        buf32 = reinterpret_tensor(buf26, (1, 256, 8), (2048, 1, 256), 0); del buf26  # reuse
        # Topologically Sorted Source Nodes: [sum_11], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:150
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf29, buf32, 2048, 128, stream=stream0)
        del buf29
        buf33 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_11], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:151
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf32, buf33, 256, 8, stream=stream0)
        buf34 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_131], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_8:152
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_8.run(buf31, buf34, 65536, stream=stream0)
        # Topologically Sorted Source Nodes: [view_60, view_61, permute_49, _scaled_dot_product_cudnn_attention_backward], Original ATen: [aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention_backward]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default:153
        buf35 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(reinterpret_tensor(buf30, (8, 4, 128, 64), (32768, 64, 256, 1), 0), permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, None, None, None, 128, 128, 0.0, True)
        del buf30
        del getitem_53
        del getitem_54
        del getitem_59
        del getitem_60
        del permute_25
        del permute_26
        del permute_27
        buf36 = buf35[0]
        assert_size_stride(buf36, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf36, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf37 = buf35[1]
        assert_size_stride(buf37, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf37, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf38 = buf35[2]
        assert_size_stride(buf38, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf38, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        del buf35
        buf39 = empty_strided_cuda((8, 128, 768), (98304, 768, 1), torch.bfloat16)
        buf42 = empty_strided_cuda((1, 768, 8), (6144, 1, 768), torch.float32)
        # Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, sum_12], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_red_fused_cat_sum_transpose_view_9:154
        stream0 = get_raw_stream(0)
        triton_red_fused_cat_sum_transpose_view_9.run(buf36, buf37, buf38, buf39, buf42, 6144, 128, stream=stream0)
        del buf36
        buf40 = reinterpret_tensor(buf38, (1024, 256), (256, 1), 0); del buf38  # reuse
        # Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, mm_9], Original ATen: [aten.transpose, aten.view, aten.cat, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:155
        extern_kernels.mm(reinterpret_tensor(buf39, (1024, 768), (768, 1), 0), permute_53, out=buf40)
        del permute_53
        buf41 = empty_strided_cuda((768, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, permute_54, permute_56], Original ATen: [aten.transpose, aten.view, aten.cat, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:156
        extern_kernels.mm(reinterpret_tensor(buf39, (768, 1024), (1, 768), 0), view_36, out=buf41)
        del view_36
        buf43 = empty_strided_cuda((1, 768), (768, 1), torch.float32)
        # Topologically Sorted Source Nodes: [permute_50, view_62, permute_51, view_63, permute_52, view_64, cat, view_65, sum_12], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_per_fused_cat_sum_transpose_view_10:157
        stream0 = get_raw_stream(0)
        triton_per_fused_cat_sum_transpose_view_10.run(buf42, buf43, 768, 8, stream=stream0)
        buf44 = empty_strided_cuda((768, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_139], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_11:158
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_11.run(buf41, buf44, 196608, stream=stream0)
        buf51 = buf28; del buf28  # reuse
        buf52 = reinterpret_tensor(buf37, (1024, 256), (256, 1), 0); del buf37  # reuse
        # Topologically Sorted Source Nodes: [view_67, convert_element_type_138, mul_52, mul_53, sum_13, mul_54, sum_14, mul_55, sub_16, sub_17, mul_56, add_34, convert_element_type_141, view_68], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:159
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf51, buf40, primals_40, mul_21, div_2, buf52, 1024, 256, stream=stream0)
        del div_2
        del primals_40
        buf47 = reinterpret_tensor(buf32, (256, 8), (1, 256), 0); del buf32  # reuse
        buf49 = buf24; del buf24  # reuse
        # Topologically Sorted Source Nodes: [view_67, convert_element_type_138, mul_57, sum_15, sum_16], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:160
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf40, mul_21, buf47, buf49, 2048, 128, stream=stream0)
        del mul_21
        buf48 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_67, convert_element_type_138, mul_57, sum_15], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:161
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf47, buf48, 256, 8, stream=stream0)
        buf50 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_67, convert_element_type_138, sum_16], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:162
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf49, buf50, 256, 8, stream=stream0)
        buf53 = reinterpret_tensor(buf16, (1024, 1024), (1024, 1), 0); del buf16  # reuse
        # Topologically Sorted Source Nodes: [mm_11], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:163
        extern_kernels.mm(buf52, permute_57, out=buf53)
        del permute_57
        buf54 = reinterpret_tensor(buf40, (256, 1024), (1024, 1), 0); del buf40  # reuse
        # Topologically Sorted Source Nodes: [permute_58, permute_60], Original ATen: [aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:164
        extern_kernels.mm(reinterpret_tensor(buf52, (256, 1024), (1, 256), 0), view_34, out=buf54)
        del view_34
        buf55 = reinterpret_tensor(buf49, (1, 256, 8), (2048, 1, 256), 0); del buf49  # reuse
        # Topologically Sorted Source Nodes: [sum_17], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:165
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf52, buf55, 2048, 128, stream=stream0)
        buf56 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_17], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:166
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf55, buf56, 256, 8, stream=stream0)
        buf57 = empty_strided_cuda((256, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_147], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:167
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf54, buf57, 262144, stream=stream0)
        buf58 = reinterpret_tensor(buf53, (8, 128, 1024), (131072, 1024, 1), 0); del buf53  # reuse
        buf61 = buf19; del buf19  # reuse
        # Topologically Sorted Source Nodes: [view_70, convert_element_type_149, linear_10, gelu_2, mul_59, mul_60, mul_61, exp_1, mul_62, mul_63, add_36, mul_64, convert_element_type_151, view_71, sum_18], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_red_fused_gelu_gelu_backward_sum_view_5:168
        stream0 = get_raw_stream(0)
        triton_red_fused_gelu_gelu_backward_sum_view_5.run(buf58, addmm_10, buf61, 8192, 128, stream=stream0)
        del addmm_10
        buf59 = reinterpret_tensor(buf54, (1024, 256), (256, 1), 0); del buf54  # reuse
        # Topologically Sorted Source Nodes: [view_70, convert_element_type_149, linear_10, gelu_2, mul_59, mul_60, mul_61, exp_1, mul_62, mul_63, add_36, mul_64, convert_element_type_151, view_71, mm_13], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:169
        extern_kernels.mm(reinterpret_tensor(buf58, (1024, 1024), (1024, 1), 0), permute_61, out=buf59)
        del permute_61
        buf60 = buf52; del buf52  # reuse
        # Topologically Sorted Source Nodes: [view_70, convert_element_type_149, linear_10, gelu_2, mul_59, mul_60, mul_61, exp_1, mul_62, mul_63, add_36, mul_64, convert_element_type_151, view_71, permute_62, permute_64], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:170
        extern_kernels.mm(reinterpret_tensor(buf58, (1024, 1024), (1, 1024), 0), view_32, out=buf60)
        del view_32
        buf62 = empty_strided_cuda((1, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [view_70, convert_element_type_149, linear_10, gelu_2, mul_59, mul_60, mul_61, exp_1, mul_62, mul_63, add_36, mul_64, convert_element_type_151, view_71, sum_18], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_per_fused_gelu_gelu_backward_sum_view_6:171
        stream0 = get_raw_stream(0)
        triton_per_fused_gelu_gelu_backward_sum_view_6.run(buf61, buf62, 1024, 8, stream=stream0)
        buf63 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_158], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:172
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf60, buf63, 262144, stream=stream0)
        buf70 = buf51; del buf51  # reuse
        buf71 = buf60; del buf60  # reuse
        # Topologically Sorted Source Nodes: [view_73, convert_element_type_157, mul_66, mul_67, sum_19, mul_68, sum_20, mul_69, sub_19, sub_20, mul_70, add_37, convert_element_type_160, view_74], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:173
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf70, buf59, primals_34, mul_16, div_3, buf71, 1024, 256, stream=stream0)
        del div_3
        del primals_34
        buf66 = reinterpret_tensor(buf55, (256, 8), (1, 256), 0); del buf55  # reuse
        buf68 = buf47; del buf47  # reuse
        # Topologically Sorted Source Nodes: [view_73, convert_element_type_157, mul_71, sum_21, sum_22], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:174
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf59, mul_16, buf66, buf68, 2048, 128, stream=stream0)
        del mul_16
        buf67 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_73, convert_element_type_157, mul_71, sum_21], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:175
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf66, buf67, 256, 8, stream=stream0)
        buf69 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_73, convert_element_type_157, sum_22], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:176
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf68, buf69, 256, 8, stream=stream0)
        buf72 = buf59; del buf59  # reuse
        # Topologically Sorted Source Nodes: [mm_15], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:177
        extern_kernels.mm(buf71, permute_65, out=buf72)
        del permute_65
        buf73 = buf31; del buf31  # reuse
        # Topologically Sorted Source Nodes: [permute_66, transpose_11, reshape_2, linear_9, permute_68], Original ATen: [aten.t, aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:178
        extern_kernels.mm(reinterpret_tensor(buf71, (256, 1024), (1, 256), 0), reinterpret_tensor(getitem_37, (1024, 256), (256, 1), 0), out=buf73)
        buf74 = reinterpret_tensor(buf68, (1, 256, 8), (2048, 1, 256), 0); del buf68  # reuse
        # Topologically Sorted Source Nodes: [sum_23], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:179
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf71, buf74, 2048, 128, stream=stream0)
        del buf71
        buf75 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_23], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:180
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf74, buf75, 256, 8, stream=stream0)
        buf76 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_166], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_8:181
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_8.run(buf73, buf76, 65536, stream=stream0)
        # Topologically Sorted Source Nodes: [view_76, view_77, permute_69, _scaled_dot_product_cudnn_attention_backward_1], Original ATen: [aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention_backward]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default:182
        buf77 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(reinterpret_tensor(buf72, (8, 4, 128, 64), (32768, 64, 256, 1), 0), permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, None, None, None, 128, 128, 0.0, True)
        del buf72
        del getitem_37
        del getitem_38
        del getitem_43
        del getitem_44
        del permute_17
        del permute_18
        del permute_19
        buf78 = buf77[0]
        assert_size_stride(buf78, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf78, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf79 = buf77[1]
        assert_size_stride(buf79, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf79, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf80 = buf77[2]
        assert_size_stride(buf80, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf80, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        del buf77
        buf81 = buf39; del buf39  # reuse
        buf84 = buf42; del buf42  # reuse
        # Topologically Sorted Source Nodes: [permute_70, view_78, permute_71, view_79, permute_72, view_80, cat_1, view_81, sum_24], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_red_fused_cat_sum_transpose_view_9:183
        stream0 = get_raw_stream(0)
        triton_red_fused_cat_sum_transpose_view_9.run(buf78, buf79, buf80, buf81, buf84, 6144, 128, stream=stream0)
        del buf78
        buf82 = reinterpret_tensor(buf80, (1024, 256), (256, 1), 0); del buf80  # reuse
        # Topologically Sorted Source Nodes: [permute_70, view_78, permute_71, view_79, permute_72, view_80, cat_1, view_81, mm_17], Original ATen: [aten.transpose, aten.view, aten.cat, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:184
        extern_kernels.mm(reinterpret_tensor(buf81, (1024, 768), (768, 1), 0), permute_73, out=buf82)
        del permute_73
        buf83 = buf41; del buf41  # reuse
        # Topologically Sorted Source Nodes: [permute_70, view_78, permute_71, view_79, permute_72, view_80, cat_1, view_81, permute_74, permute_76], Original ATen: [aten.transpose, aten.view, aten.cat, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:185
        extern_kernels.mm(reinterpret_tensor(buf81, (768, 1024), (1, 768), 0), view_24, out=buf83)
        del view_24
        buf85 = empty_strided_cuda((1, 768), (768, 1), torch.float32)
        # Topologically Sorted Source Nodes: [permute_70, view_78, permute_71, view_79, permute_72, view_80, cat_1, view_81, sum_24], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_per_fused_cat_sum_transpose_view_10:186
        stream0 = get_raw_stream(0)
        triton_per_fused_cat_sum_transpose_view_10.run(buf84, buf85, 768, 8, stream=stream0)
        buf86 = empty_strided_cuda((768, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_174], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_11:187
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_11.run(buf83, buf86, 196608, stream=stream0)
        buf93 = buf70; del buf70  # reuse
        buf94 = reinterpret_tensor(buf79, (1024, 256), (256, 1), 0); del buf79  # reuse
        # Topologically Sorted Source Nodes: [view_83, convert_element_type_173, mul_73, mul_74, sum_25, mul_75, sum_26, mul_76, sub_22, sub_23, mul_77, add_38, convert_element_type_176, view_84], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:188
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf93, buf82, primals_28, mul_14, div_4, buf94, 1024, 256, stream=stream0)
        del div_4
        del primals_28
        buf89 = reinterpret_tensor(buf74, (256, 8), (1, 256), 0); del buf74  # reuse
        buf91 = buf66; del buf66  # reuse
        # Topologically Sorted Source Nodes: [view_83, convert_element_type_173, mul_78, sum_27, sum_28], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:189
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf82, mul_14, buf89, buf91, 2048, 128, stream=stream0)
        del mul_14
        buf90 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_83, convert_element_type_173, mul_78, sum_27], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:190
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf89, buf90, 256, 8, stream=stream0)
        buf92 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_83, convert_element_type_173, sum_28], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:191
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf91, buf92, 256, 8, stream=stream0)
        buf95 = reinterpret_tensor(buf58, (1024, 1024), (1024, 1), 0); del buf58  # reuse
        # Topologically Sorted Source Nodes: [mm_19], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:192
        extern_kernels.mm(buf94, permute_77, out=buf95)
        del permute_77
        buf96 = reinterpret_tensor(buf82, (256, 1024), (1024, 1), 0); del buf82  # reuse
        # Topologically Sorted Source Nodes: [permute_78, permute_80], Original ATen: [aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:193
        extern_kernels.mm(reinterpret_tensor(buf94, (256, 1024), (1, 256), 0), view_22, out=buf96)
        del view_22
        buf97 = reinterpret_tensor(buf91, (1, 256, 8), (2048, 1, 256), 0); del buf91  # reuse
        # Topologically Sorted Source Nodes: [sum_29], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:194
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf94, buf97, 2048, 128, stream=stream0)
        buf98 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_29], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:195
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf97, buf98, 256, 8, stream=stream0)
        buf99 = empty_strided_cuda((256, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_182], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:196
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf96, buf99, 262144, stream=stream0)
        buf100 = reinterpret_tensor(buf95, (8, 128, 1024), (131072, 1024, 1), 0); del buf95  # reuse
        buf103 = buf61; del buf61  # reuse
        # Topologically Sorted Source Nodes: [view_86, convert_element_type_184, linear_6, gelu_1, mul_80, mul_81, mul_82, exp_2, mul_83, mul_84, add_40, mul_85, convert_element_type_186, view_87, sum_30], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_red_fused_gelu_gelu_backward_sum_view_5:197
        stream0 = get_raw_stream(0)
        triton_red_fused_gelu_gelu_backward_sum_view_5.run(buf100, addmm_6, buf103, 8192, 128, stream=stream0)
        del addmm_6
        buf101 = reinterpret_tensor(buf96, (1024, 256), (256, 1), 0); del buf96  # reuse
        # Topologically Sorted Source Nodes: [view_86, convert_element_type_184, linear_6, gelu_1, mul_80, mul_81, mul_82, exp_2, mul_83, mul_84, add_40, mul_85, convert_element_type_186, view_87, mm_21], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:198
        extern_kernels.mm(reinterpret_tensor(buf100, (1024, 1024), (1024, 1), 0), permute_81, out=buf101)
        del permute_81
        buf102 = buf94; del buf94  # reuse
        # Topologically Sorted Source Nodes: [view_86, convert_element_type_184, linear_6, gelu_1, mul_80, mul_81, mul_82, exp_2, mul_83, mul_84, add_40, mul_85, convert_element_type_186, view_87, permute_82, permute_84], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:199
        extern_kernels.mm(reinterpret_tensor(buf100, (1024, 1024), (1, 1024), 0), view_20, out=buf102)
        del view_20
        buf104 = empty_strided_cuda((1, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [view_86, convert_element_type_184, linear_6, gelu_1, mul_80, mul_81, mul_82, exp_2, mul_83, mul_84, add_40, mul_85, convert_element_type_186, view_87, sum_30], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_per_fused_gelu_gelu_backward_sum_view_6:200
        stream0 = get_raw_stream(0)
        triton_per_fused_gelu_gelu_backward_sum_view_6.run(buf103, buf104, 1024, 8, stream=stream0)
        buf105 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_193], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:201
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf102, buf105, 262144, stream=stream0)
        buf112 = buf93; del buf93  # reuse
        buf113 = buf102; del buf102  # reuse
        # Topologically Sorted Source Nodes: [view_89, convert_element_type_192, mul_87, mul_88, sum_31, mul_89, sum_32, mul_90, sub_25, sub_26, mul_91, add_41, convert_element_type_195, view_90], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:202
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf112, buf101, primals_22, mul_9, div_5, buf113, 1024, 256, stream=stream0)
        del div_5
        del primals_22
        buf108 = reinterpret_tensor(buf97, (256, 8), (1, 256), 0); del buf97  # reuse
        buf110 = buf89; del buf89  # reuse
        # Topologically Sorted Source Nodes: [view_89, convert_element_type_192, mul_92, sum_33, sum_34], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:203
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf101, mul_9, buf108, buf110, 2048, 128, stream=stream0)
        del mul_9
        buf109 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_89, convert_element_type_192, mul_92, sum_33], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:204
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf108, buf109, 256, 8, stream=stream0)
        buf111 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_89, convert_element_type_192, sum_34], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:205
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf110, buf111, 256, 8, stream=stream0)
        buf114 = buf101; del buf101  # reuse
        # Topologically Sorted Source Nodes: [mm_23], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:206
        extern_kernels.mm(buf113, permute_85, out=buf114)
        del permute_85
        buf115 = buf73; del buf73  # reuse
        # Topologically Sorted Source Nodes: [permute_86, transpose_7, reshape_1, linear_5, permute_88], Original ATen: [aten.t, aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:207
        extern_kernels.mm(reinterpret_tensor(buf113, (256, 1024), (1, 256), 0), reinterpret_tensor(getitem_21, (1024, 256), (256, 1), 0), out=buf115)
        buf116 = reinterpret_tensor(buf110, (1, 256, 8), (2048, 1, 256), 0); del buf110  # reuse
        # Topologically Sorted Source Nodes: [sum_35], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:208
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf113, buf116, 2048, 128, stream=stream0)
        del buf113
        buf117 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_35], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:209
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf116, buf117, 256, 8, stream=stream0)
        buf118 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_201], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_8:210
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_8.run(buf115, buf118, 65536, stream=stream0)
        # Topologically Sorted Source Nodes: [view_92, view_93, permute_89, _scaled_dot_product_cudnn_attention_backward_2], Original ATen: [aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention_backward]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default:211
        buf119 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(reinterpret_tensor(buf114, (8, 4, 128, 64), (32768, 64, 256, 1), 0), permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, None, None, None, 128, 128, 0.0, True)
        del buf114
        del getitem_21
        del getitem_22
        del getitem_27
        del getitem_28
        del permute_10
        del permute_11
        del permute_9
        buf120 = buf119[0]
        assert_size_stride(buf120, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf120, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf121 = buf119[1]
        assert_size_stride(buf121, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf121, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf122 = buf119[2]
        assert_size_stride(buf122, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf122, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        del buf119
        buf123 = buf81; del buf81  # reuse
        buf126 = buf84; del buf84  # reuse
        # Topologically Sorted Source Nodes: [permute_90, view_94, permute_91, view_95, permute_92, view_96, cat_2, view_97, sum_36], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_red_fused_cat_sum_transpose_view_9:212
        stream0 = get_raw_stream(0)
        triton_red_fused_cat_sum_transpose_view_9.run(buf120, buf121, buf122, buf123, buf126, 6144, 128, stream=stream0)
        del buf120
        buf124 = reinterpret_tensor(buf122, (1024, 256), (256, 1), 0); del buf122  # reuse
        # Topologically Sorted Source Nodes: [permute_90, view_94, permute_91, view_95, permute_92, view_96, cat_2, view_97, mm_25], Original ATen: [aten.transpose, aten.view, aten.cat, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:213
        extern_kernels.mm(reinterpret_tensor(buf123, (1024, 768), (768, 1), 0), permute_93, out=buf124)
        del permute_93
        buf125 = buf83; del buf83  # reuse
        # Topologically Sorted Source Nodes: [permute_90, view_94, permute_91, view_95, permute_92, view_96, cat_2, view_97, permute_94, permute_96], Original ATen: [aten.transpose, aten.view, aten.cat, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:214
        extern_kernels.mm(reinterpret_tensor(buf123, (768, 1024), (1, 768), 0), view_12, out=buf125)
        del view_12
        buf127 = empty_strided_cuda((1, 768), (768, 1), torch.float32)
        # Topologically Sorted Source Nodes: [permute_90, view_94, permute_91, view_95, permute_92, view_96, cat_2, view_97, sum_36], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_per_fused_cat_sum_transpose_view_10:215
        stream0 = get_raw_stream(0)
        triton_per_fused_cat_sum_transpose_view_10.run(buf126, buf127, 768, 8, stream=stream0)
        buf128 = empty_strided_cuda((768, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_209], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_11:216
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_11.run(buf125, buf128, 196608, stream=stream0)
        buf135 = buf112; del buf112  # reuse
        buf136 = reinterpret_tensor(buf121, (1024, 256), (256, 1), 0); del buf121  # reuse
        # Topologically Sorted Source Nodes: [view_99, convert_element_type_208, mul_94, mul_95, sum_37, mul_96, sum_38, mul_97, sub_28, sub_29, mul_98, add_42, convert_element_type_211, view_100], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:217
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf135, buf124, primals_16, mul_7, div_6, buf136, 1024, 256, stream=stream0)
        del div_6
        del primals_16
        buf131 = reinterpret_tensor(buf116, (256, 8), (1, 256), 0); del buf116  # reuse
        buf133 = buf108; del buf108  # reuse
        # Topologically Sorted Source Nodes: [view_99, convert_element_type_208, mul_99, sum_39, sum_40], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:218
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf124, mul_7, buf131, buf133, 2048, 128, stream=stream0)
        del mul_7
        buf132 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_99, convert_element_type_208, mul_99, sum_39], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:219
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf131, buf132, 256, 8, stream=stream0)
        buf134 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_99, convert_element_type_208, sum_40], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:220
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf133, buf134, 256, 8, stream=stream0)
        buf137 = reinterpret_tensor(buf100, (1024, 1024), (1024, 1), 0); del buf100  # reuse
        # Topologically Sorted Source Nodes: [mm_27], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:221
        extern_kernels.mm(buf136, permute_97, out=buf137)
        del permute_97
        buf138 = reinterpret_tensor(buf124, (256, 1024), (1024, 1), 0); del buf124  # reuse
        # Topologically Sorted Source Nodes: [permute_98, permute_100], Original ATen: [aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:222
        extern_kernels.mm(reinterpret_tensor(buf136, (256, 1024), (1, 256), 0), view_10, out=buf138)
        del view_10
        buf139 = reinterpret_tensor(buf133, (1, 256, 8), (2048, 1, 256), 0); del buf133  # reuse
        # Topologically Sorted Source Nodes: [sum_41], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:223
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf136, buf139, 2048, 128, stream=stream0)
        buf140 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_41], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:224
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf139, buf140, 256, 8, stream=stream0)
        buf141 = empty_strided_cuda((256, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_217], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:225
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf138, buf141, 262144, stream=stream0)
        buf142 = reinterpret_tensor(buf137, (8, 128, 1024), (131072, 1024, 1), 0); del buf137  # reuse
        buf145 = buf103; del buf103  # reuse
        # Topologically Sorted Source Nodes: [view_102, convert_element_type_219, linear_2, gelu, mul_101, mul_102, mul_103, exp_3, mul_104, mul_105, add_44, mul_106, convert_element_type_221, view_103, sum_42], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_red_fused_gelu_gelu_backward_sum_view_5:226
        stream0 = get_raw_stream(0)
        triton_red_fused_gelu_gelu_backward_sum_view_5.run(buf142, addmm_2, buf145, 8192, 128, stream=stream0)
        del addmm_2
        buf143 = reinterpret_tensor(buf138, (1024, 256), (256, 1), 0); del buf138  # reuse
        # Topologically Sorted Source Nodes: [view_102, convert_element_type_219, linear_2, gelu, mul_101, mul_102, mul_103, exp_3, mul_104, mul_105, add_44, mul_106, convert_element_type_221, view_103, mm_29], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:227
        extern_kernels.mm(reinterpret_tensor(buf142, (1024, 1024), (1024, 1), 0), permute_101, out=buf143)
        del permute_101
        buf144 = buf136; del buf136  # reuse
        # Topologically Sorted Source Nodes: [view_102, convert_element_type_219, linear_2, gelu, mul_101, mul_102, mul_103, exp_3, mul_104, mul_105, add_44, mul_106, convert_element_type_221, view_103, permute_102, permute_104], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:228
        extern_kernels.mm(reinterpret_tensor(buf142, (1024, 1024), (1, 1024), 0), view_8, out=buf144)
        del buf142
        del view_8
        buf146 = empty_strided_cuda((1, 1024), (1024, 1), torch.float32)
        # Topologically Sorted Source Nodes: [view_102, convert_element_type_219, linear_2, gelu, mul_101, mul_102, mul_103, exp_3, mul_104, mul_105, add_44, mul_106, convert_element_type_221, view_103, sum_42], Original ATen: [aten.view, aten.gelu_backward, aten.gelu, aten.sum]
        # [Provenance debug handles] triton_per_fused_gelu_gelu_backward_sum_view_6:229
        stream0 = get_raw_stream(0)
        triton_per_fused_gelu_gelu_backward_sum_view_6.run(buf145, buf146, 1024, 8, stream=stream0)
        del buf145
        buf147 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_228], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_0:230
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_0.run(buf144, buf147, 262144, stream=stream0)
        buf154 = buf135; del buf135  # reuse
        buf155 = buf144; del buf144  # reuse
        # Topologically Sorted Source Nodes: [view_105, convert_element_type_227, mul_108, mul_109, sum_43, mul_110, sum_44, mul_111, sub_31, sub_32, mul_112, add_45, convert_element_type_230, view_106], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add]
        # [Provenance debug handles] triton_per_fused__to_copy_add_native_layer_norm_backward_view_7:231
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_native_layer_norm_backward_view_7.run(buf154, buf143, primals_10, mul_2, div_7, buf155, 1024, 256, stream=stream0)
        del div_7
        del primals_10
        buf150 = reinterpret_tensor(buf139, (256, 8), (1, 256), 0); del buf139  # reuse
        buf152 = buf131; del buf131  # reuse
        # Topologically Sorted Source Nodes: [view_105, convert_element_type_227, mul_113, sum_45, sum_46], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_native_layer_norm_backward_view_2:232
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_native_layer_norm_backward_view_2.run(buf143, mul_2, buf150, buf152, 2048, 128, stream=stream0)
        del mul_2
        buf151 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_105, convert_element_type_227, mul_113, sum_45], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:233
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf150, buf151, 256, 8, stream=stream0)
        buf153 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_105, convert_element_type_227, sum_46], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:234
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf152, buf153, 256, 8, stream=stream0)
        buf156 = buf143; del buf143  # reuse
        # Topologically Sorted Source Nodes: [mm_31], Original ATen: [aten.mm]
        # [Provenance debug handles] extern_kernels.mm:235
        extern_kernels.mm(buf155, permute_105, out=buf156)
        del permute_105
        buf157 = buf115; del buf115  # reuse
        # Topologically Sorted Source Nodes: [permute_106, transpose_3, reshape, linear_1, permute_108], Original ATen: [aten.t, aten.transpose, aten.view, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:236
        extern_kernels.mm(reinterpret_tensor(buf155, (256, 1024), (1, 256), 0), reinterpret_tensor(getitem_5, (1024, 256), (256, 1), 0), out=buf157)
        buf158 = reinterpret_tensor(buf152, (1, 256, 8), (2048, 1, 256), 0); del buf152  # reuse
        # Topologically Sorted Source Nodes: [sum_47], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_red_fused_sum_4:237
        stream0 = get_raw_stream(0)
        triton_red_fused_sum_4.run(buf155, buf158, 2048, 128, stream=stream0)
        del buf155
        buf159 = empty_strided_cuda((1, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [sum_47], Original ATen: [aten.sum]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:238
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf158, buf159, 256, 8, stream=stream0)
        buf160 = empty_strided_cuda((256, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_236], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_8:239
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_8.run(buf157, buf160, 65536, stream=stream0)
        del buf157
        # Topologically Sorted Source Nodes: [view_108, view_109, permute_109, _scaled_dot_product_cudnn_attention_backward_3], Original ATen: [aten.view, aten.transpose, aten._scaled_dot_product_cudnn_attention_backward]
        # [Provenance debug handles] torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default:240
        buf161 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(reinterpret_tensor(buf156, (8, 4, 128, 64), (32768, 64, 256, 1), 0), permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, None, None, None, 128, 128, 0.0, True)
        del buf156
        del getitem_11
        del getitem_12
        del getitem_5
        del getitem_6
        del permute_1
        del permute_2
        del permute_3
        buf162 = buf161[0]
        assert_size_stride(buf162, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf162, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf163 = buf161[1]
        assert_size_stride(buf163, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf163, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        buf164 = buf161[2]
        assert_size_stride(buf164, (8, 4, 128, 64), (32768, 64, 256, 1), 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        assert_alignment(buf164, 16, 'torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default')
        del buf161
        buf165 = buf123; del buf123  # reuse
        buf168 = buf126; del buf126  # reuse
        # Topologically Sorted Source Nodes: [permute_110, view_110, permute_111, view_111, permute_112, view_112, cat_3, view_113, sum_48], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_red_fused_cat_sum_transpose_view_9:241
        stream0 = get_raw_stream(0)
        triton_red_fused_cat_sum_transpose_view_9.run(buf162, buf163, buf164, buf165, buf168, 6144, 128, stream=stream0)
        del buf162
        del buf163
        buf166 = reinterpret_tensor(buf164, (1024, 256), (256, 1), 0); del buf164  # reuse
        # Topologically Sorted Source Nodes: [permute_110, view_110, permute_111, view_111, permute_112, view_112, cat_3, view_113, mm_33], Original ATen: [aten.transpose, aten.view, aten.cat, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:242
        extern_kernels.mm(reinterpret_tensor(buf165, (1024, 768), (768, 1), 0), permute_113, out=buf166)
        del permute_113
        buf167 = buf125; del buf125  # reuse
        # Topologically Sorted Source Nodes: [permute_110, view_110, permute_111, view_111, permute_112, view_112, cat_3, view_113, permute_114, permute_116], Original ATen: [aten.transpose, aten.view, aten.cat, aten.t, aten.mm]
        # [Provenance debug handles] extern_kernels.mm:243
        extern_kernels.mm(reinterpret_tensor(buf165, (768, 1024), (1, 768), 0), view, out=buf167)
        del buf165
        del view
        buf169 = empty_strided_cuda((1, 768), (768, 1), torch.float32)
        # Topologically Sorted Source Nodes: [permute_110, view_110, permute_111, view_111, permute_112, view_112, cat_3, view_113, sum_48], Original ATen: [aten.transpose, aten.view, aten.cat, aten.sum]
        # [Provenance debug handles] triton_per_fused_cat_sum_transpose_view_10:244
        stream0 = get_raw_stream(0)
        triton_per_fused_cat_sum_transpose_view_10.run(buf168, buf169, 768, 8, stream=stream0)
        del buf168
        buf170 = empty_strided_cuda((768, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [convert_element_type_244], Original ATen: [aten._to_copy]
        # [Provenance debug handles] triton_poi_fused__to_copy_11:245
        stream0 = get_raw_stream(0)
        triton_poi_fused__to_copy_11.run(buf167, buf170, 196608, stream=stream0)
        del buf167
        buf181 = empty_strided_cuda((1024, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [full_1], Original ATen: [aten.embedding_dense_backward]
        # [Provenance debug handles] triton_poi_fused_embedding_dense_backward_12:246
        stream0 = get_raw_stream(0)
        triton_poi_fused_embedding_dense_backward_12.run(buf181, 262144, stream=stream0)
        buf177 = buf154; del buf154  # reuse
        # Topologically Sorted Source Nodes: [view_115, convert_element_type_243, mul_115, mul_116, sum_49, x, layer_norm, mul_117, sum_50, mul_118, sub_34, sub_35, div_8, mul_119, add_46, scalar_tensor, eq_1, unsqueeze_1, where_1, full_1, index_put_1], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward, aten.add, aten.native_layer_norm, aten.embedding_dense_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13:247
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_add_embedding_dense_backward_native_layer_norm_native_layer_norm_backward_view_13.run(buf177, buf166, primals_4, embedding, embedding_1, getitem_1, rsqrt, primals_2, buf181, 1024, 256, stream=stream0)
        del primals_2
        del primals_4
        buf173 = reinterpret_tensor(buf158, (256, 8), (1, 256), 0); del buf158  # reuse
        buf175 = buf150; del buf150  # reuse
        # Topologically Sorted Source Nodes: [view_115, convert_element_type_243, x, layer_norm, mul_120, sum_51, sum_52], Original ATen: [aten.view, aten._to_copy, aten.add, aten.native_layer_norm, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14:248
        stream0 = get_raw_stream(0)
        triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_view_14.run(buf166, embedding, embedding_1, getitem_1, rsqrt, buf173, buf175, 2048, 128, stream=stream0)
        del buf166
        del embedding
        del embedding_1
        del getitem_1
        del rsqrt
        buf174 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_115, convert_element_type_243, x, layer_norm, mul_120, sum_51], Original ATen: [aten.view, aten._to_copy, aten.add, aten.native_layer_norm, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:249
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf173, buf174, 256, 8, stream=stream0)
        del buf173
        buf176 = empty_strided_cuda((256, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [view_115, convert_element_type_243, sum_52], Original ATen: [aten.view, aten._to_copy, aten.native_layer_norm_backward]
        # [Provenance debug handles] triton_per_fused__to_copy_native_layer_norm_backward_view_3:250
        stream0 = get_raw_stream(0)
        triton_per_fused__to_copy_native_layer_norm_backward_view_3.run(buf175, buf176, 256, 8, stream=stream0)
        del buf175
        buf179 = empty_strided_cuda((128, 256), (256, 1), torch.float32)
        # Topologically Sorted Source Nodes: [full], Original ATen: [aten.embedding_dense_backward]
        # [Provenance debug handles] triton_poi_fused_embedding_dense_backward_15:251
        stream0 = get_raw_stream(0)
        triton_poi_fused_embedding_dense_backward_15.run(buf179, 32768, stream=stream0)
        # Topologically Sorted Source Nodes: [sum_53, view_116, eq, unsqueeze, scalar_tensor, where, full, index_put], Original ATen: [aten.sum, aten.view, aten.embedding_dense_backward]
        # [Provenance debug handles] triton_per_fused_embedding_dense_backward_sum_view_16:252
        stream0 = get_raw_stream(0)
        triton_per_fused_embedding_dense_backward_sum_view_16.run(buf177, iota, buf179, 32768, 8, stream=stream0)
        del buf177
        del iota
    return (buf2, buf7, buf9, buf14, buf15, buf20, buf21, buf25, buf27, buf33, buf34, buf43, buf44, buf48, buf50, buf56, buf57, buf62, buf63, buf67, buf69, buf75, buf76, buf85, buf86, buf90, buf92, buf98, buf99, buf104, buf105, buf109, buf111, buf117, buf118, buf127, buf128, buf132, buf134, buf140, buf141, buf146, buf147, buf151, buf153, buf159, buf160, buf169, buf170, buf181, buf174, buf176, buf179, )


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        primals_2, primals_4, primals_10, primals_16, primals_22, primals_28, primals_34, primals_40, primals_46, primals_52, embedding, iota, embedding_1, getitem_1, rsqrt, view, permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, mul_2, view_8, addmm_2, view_10, mul_7, view_12, permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, mul_9, view_20, addmm_6, view_22, mul_14, view_24, permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, mul_16, view_32, addmm_10, view_34, mul_21, view_36, permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, mul_23, view_44, addmm_14, view_46, mul_28, view_48, permute_35, div, permute_37, permute_41, div_1, permute_45, permute_53, div_2, permute_57, permute_61, div_3, permute_65, permute_73, div_4, permute_77, permute_81, div_5, permute_85, permute_93, div_6, permute_97, permute_101, div_7, permute_105, permute_113, tangents_1 = args
        args.clear()
        partition0_args = [tangents_1, view_48, permute_35, primals_52, mul_28, div, permute_37, view_46, addmm_14, permute_41, view_44, primals_46, mul_23, div_1, permute_45, getitem_53, permute_25, permute_26, permute_27, getitem_54, getitem_59, getitem_60, permute_53, view_36, primals_40, mul_21, div_2, permute_57, view_34, addmm_10, permute_61, view_32, primals_34, mul_16, div_3, permute_65, getitem_37, permute_17, permute_18, permute_19, getitem_38, getitem_43, getitem_44, permute_73, view_24, primals_28, mul_14, div_4, permute_77, view_22, addmm_6, permute_81, view_20, primals_22, mul_9, div_5, permute_85, getitem_21, permute_9, permute_10, permute_11, getitem_22, getitem_27, getitem_28, permute_93, view_12, primals_16, mul_7, div_6, permute_97, view_10, addmm_2, permute_101, view_8, primals_10, mul_2, div_7, permute_105, getitem_5, permute_1, permute_2, permute_3, getitem_6, getitem_11, getitem_12, permute_113, view, primals_4, embedding, embedding_1, getitem_1, rsqrt, primals_2, iota]
        del tangents_1, view_48, permute_35, primals_52, mul_28, div, permute_37, view_46, addmm_14, permute_41, view_44, primals_46, mul_23, div_1, permute_45, getitem_53, permute_25, permute_26, permute_27, getitem_54, getitem_59, getitem_60, permute_53, view_36, primals_40, mul_21, div_2, permute_57, view_34, addmm_10, permute_61, view_32, primals_34, mul_16, div_3, permute_65, getitem_37, permute_17, permute_18, permute_19, getitem_38, getitem_43, getitem_44, permute_73, view_24, primals_28, mul_14, div_4, permute_77, view_22, addmm_6, permute_81, view_20, primals_22, mul_9, div_5, permute_85, getitem_21, permute_9, permute_10, permute_11, getitem_22, getitem_27, getitem_28, permute_93, view_12, primals_16, mul_7, div_6, permute_97, view_10, addmm_2, permute_101, view_8, primals_10, mul_2, div_7, permute_105, getitem_5, permute_1, permute_2, permute_3, getitem_6, getitem_11, getitem_12, permute_113, view, primals_4, embedding, embedding_1, getitem_1, rsqrt, primals_2, iota
        (buf2, buf7, buf9, buf14, buf15, buf20, buf21, buf25, buf27, buf33, buf34, buf43, buf44, buf48, buf50, buf56, buf57, buf62, buf63, buf67, buf69, buf75, buf76, buf85, buf86, buf90, buf92, buf98, buf99, buf104, buf105, buf109, buf111, buf117, buf118, buf127, buf128, buf132, buf134, buf140, buf141, buf146, buf147, buf151, buf153, buf159, buf160, buf169, buf170, buf181, buf174, buf176, buf179) = self.partitions[0](partition0_args)
        del partition0_args
        return (buf181, None, buf179, buf174, buf176, buf170, reinterpret_tensor(buf169, (768, ), (1, ), 0), buf160, reinterpret_tensor(buf159, (256, ), (1, ), 0), buf151, buf153, buf147, reinterpret_tensor(buf146, (1024, ), (1, ), 0), buf141, reinterpret_tensor(buf140, (256, ), (1, ), 0), buf132, buf134, buf128, reinterpret_tensor(buf127, (768, ), (1, ), 0), buf118, reinterpret_tensor(buf117, (256, ), (1, ), 0), buf109, buf111, buf105, reinterpret_tensor(buf104, (1024, ), (1, ), 0), buf99, reinterpret_tensor(buf98, (256, ), (1, ), 0), buf90, buf92, buf86, reinterpret_tensor(buf85, (768, ), (1, ), 0), buf76, reinterpret_tensor(buf75, (256, ), (1, ), 0), buf67, buf69, buf63, reinterpret_tensor(buf62, (1024, ), (1, ), 0), buf57, reinterpret_tensor(buf56, (256, ), (1, ), 0), buf48, buf50, buf44, reinterpret_tensor(buf43, (768, ), (1, ), 0), buf34, reinterpret_tensor(buf33, (256, ), (1, ), 0), buf25, buf27, buf21, reinterpret_tensor(buf20, (1024, ), (1, ), 0), buf15, reinterpret_tensor(buf14, (256, ), (1, ), 0), buf7, buf9, buf2, )

runner = Runner(partitions=[partition_0,])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_2 = rand_strided((8, 128), (128, 1), device='cuda:0', dtype=torch.int64)
    primals_4 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_10 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_16 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_22 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_28 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_34 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_40 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_46 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    primals_52 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    embedding = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    iota = rand_strided((128, ), (1, ), device='cuda:0', dtype=torch.int64)
    embedding_1 = rand_strided((128, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    getitem_1 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    rsqrt = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    view = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_1 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_2 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_3 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_5 = rand_strided((8, 4, 128, 64), (32768, 64, 256, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_6 = rand_strided((8, 4, 128, 1), (512, 128, 1, 1), device='cuda:0', dtype=torch.float32)
    getitem_11 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    getitem_12 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    mul_2 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_8 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    addmm_2 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    view_10 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    mul_7 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_12 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_9 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_10 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_11 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_21 = rand_strided((8, 4, 128, 64), (32768, 64, 256, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_22 = rand_strided((8, 4, 128, 1), (512, 128, 1, 1), device='cuda:0', dtype=torch.float32)
    getitem_27 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    getitem_28 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    mul_9 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_20 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    addmm_6 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    view_22 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    mul_14 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_24 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_17 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_18 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_19 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_37 = rand_strided((8, 4, 128, 64), (32768, 64, 256, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_38 = rand_strided((8, 4, 128, 1), (512, 128, 1, 1), device='cuda:0', dtype=torch.float32)
    getitem_43 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    getitem_44 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    mul_16 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_32 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    addmm_10 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    view_34 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    mul_21 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_36 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_25 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_26 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_27 = rand_strided((8, 4, 128, 64), (98304, 64, 768, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_53 = rand_strided((8, 4, 128, 64), (32768, 64, 256, 1), device='cuda:0', dtype=torch.bfloat16)
    getitem_54 = rand_strided((8, 4, 128, 1), (512, 128, 1, 1), device='cuda:0', dtype=torch.float32)
    getitem_59 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    getitem_60 = rand_strided((), (), device='cuda:0', dtype=torch.int64)
    mul_23 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_44 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    addmm_14 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    view_46 = rand_strided((1024, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    mul_28 = rand_strided((8, 128, 256), (32768, 256, 1), device='cuda:0', dtype=torch.float32)
    view_48 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_35 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_37 = rand_strided((256, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_41 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_1 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_45 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_53 = rand_strided((768, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_2 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_57 = rand_strided((256, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_61 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_3 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_65 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_73 = rand_strided((768, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_4 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_77 = rand_strided((256, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_81 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_5 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_85 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_93 = rand_strided((768, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_6 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_97 = rand_strided((256, 1024), (1024, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_101 = rand_strided((1024, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    div_7 = rand_strided((8, 128, 1), (128, 1, 1), device='cuda:0', dtype=torch.float32)
    permute_105 = rand_strided((256, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    permute_113 = rand_strided((768, 256), (256, 1), device='cuda:0', dtype=torch.bfloat16)
    tangents_1 = rand_strided((8, 128, 1024), (131072, 1024, 1), device='cuda:0', dtype=torch.bfloat16)
    return [primals_2, primals_4, primals_10, primals_16, primals_22, primals_28, primals_34, primals_40, primals_46, primals_52, embedding, iota, embedding_1, getitem_1, rsqrt, view, permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, mul_2, view_8, addmm_2, view_10, mul_7, view_12, permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, mul_9, view_20, addmm_6, view_22, mul_14, view_24, permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, mul_16, view_32, addmm_10, view_34, mul_21, view_36, permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, mul_23, view_44, addmm_14, view_46, mul_28, view_48, permute_35, div, permute_37, permute_41, div_1, permute_45, permute_53, div_2, permute_57, permute_61, div_3, permute_65, permute_73, div_4, permute_77, permute_81, div_5, permute_85, permute_93, div_6, permute_97, permute_101, div_7, permute_105, permute_113, tangents_1]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
