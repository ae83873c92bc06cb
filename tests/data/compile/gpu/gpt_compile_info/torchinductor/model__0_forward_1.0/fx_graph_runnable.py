
import os
os.environ['TORCH_CUDA_ARCH_LIST'] = '9.0a'
os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/torchinductor_root'

import torch
from torch import tensor, device
import torch.fx as fx
from torch._dynamo.testing import rand_strided
from math import inf
import torch._inductor.inductor_prims



import torch._dynamo.config
import torch._inductor.config
import torch._functorch.config
import torch.fx.experimental._config

torch._inductor.config.trace.enabled = False
torch._inductor.config.trace.save_real_tensors = False
torch._inductor.config.trace.debug_dir = '/tmp/r4/compile/gpt_compile_info'
torch._inductor.config.trace.provenance_tracking_level = 1
torch._functorch.config.functionalize_rng_ops = False
torch._functorch.config.fake_tensor_allow_unsafe_data_ptr_access = True
torch._functorch.config.unlift_effect_tokens = True
torch._functorch.config.selective_decompose = False



isolate_fails_code_str = None





if "__compile_source__" in globals():
    import inspect as __after_aot_inspect
    import linecache as __after_aot_linecache
    __after_aot_filename = __after_aot_inspect.currentframe().f_code.co_filename
    __after_aot_linecache.cache[__after_aot_filename] = (
        len(__compile_source__),
        None,
        __compile_source__.splitlines(True),
        __after_aot_filename,
    )
# torch version: 2.11.0+cu130
# torch cuda version: 13.0
# torch git version: 70d99e998b4955e0049d13a98d77ae1b14db1f45


# CUDA Info: 
# nvcc: NVIDIA (R) Cuda compiler driver 
# Copyright (c) 2005-2025 NVIDIA Corporation 
# Built on Wed_Aug_20_01:58:59_PM_PDT_2025 
# Cuda compilation tools, release 13.0, V13.0.88 
# Build cuda_13.0.r13.0/compiler.36424714_0 

# GPU Hardware Info: 
# NVIDIA H100 80GB HBM3 : 1 

torch._higher_order_ops.triton_kernel_wrap.kernel_side_table.reset_table()

from torch.nn import *
class Repro(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()



    def forward(self, primals_1, primals_2, primals_3, primals_4, primals_5, primals_6, primals_7, primals_8, primals_9, primals_10, primals_11, primals_12, primals_13, primals_14, primals_15, primals_16, primals_17, primals_18, primals_19, primals_20, primals_21, primals_22, primals_23, primals_24, primals_25, primals_26, primals_27, primals_28, primals_29, primals_30, primals_31, primals_32, primals_33, primals_34, primals_35, primals_36, primals_37, primals_38, primals_39, primals_40, primals_41, primals_42, primals_43, primals_44, primals_45, primals_46, primals_47, primals_48, primals_49, primals_50, primals_51, primals_52, primals_53, primals_54):
        embedding = torch.ops.aten.embedding.default(primals_1, primals_2);  primals_1 = None
        iota = torch.ops.prims.iota.default(128, start = 0, step = 1, dtype = torch.int64, device = device(type='cuda', index=0), requires_grad = False)
        embedding_1 = torch.ops.aten.embedding.default(primals_3, iota);  primals_3 = None
        add = torch.ops.aten.add.Tensor(embedding, embedding_1)
        var_mean = torch.ops.aten.var_mean.correction(add, [2], correction = 0, keepdim = True)
        getitem = var_mean[0]
        getitem_1 = var_mean[1];  var_mean = None
        add_1 = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt = torch.ops.aten.rsqrt.default(add_1);  add_1 = None
        sub = torch.ops.aten.sub.Tensor(add, getitem_1)
        mul = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = None
        mul_1 = torch.ops.aten.mul.Tensor(mul, primals_4);  mul = None
        add_2 = torch.ops.aten.add.Tensor(mul_1, primals_5);  mul_1 = primals_5 = None
        convert_element_type = torch.ops.prims.convert_element_type.default(primals_7, torch.bfloat16);  primals_7 = None
        convert_element_type_1 = torch.ops.prims.convert_element_type.default(primals_6, torch.bfloat16);  primals_6 = None
        convert_element_type_2 = torch.ops.prims.convert_element_type.default(add_2, torch.bfloat16);  add_2 = None
        view = torch.ops.aten.view.default(convert_element_type_2, [1024, 256]);  convert_element_type_2 = None
        permute = torch.ops.aten.permute.default(convert_element_type_1, [1, 0]);  convert_element_type_1 = None
        addmm = torch.ops.aten.addmm.default(convert_element_type, view, permute);  convert_element_type = None
        view_1 = torch.ops.aten.view.default(addmm, [8, 128, 768]);  addmm = None
        split = torch.ops.aten.split.Tensor(view_1, 256, 2);  view_1 = None
        getitem_2 = split[0]
        getitem_3 = split[1]
        getitem_4 = split[2];  split = None
        view_2 = torch.ops.aten.view.default(getitem_2, [8, 128, 4, 64]);  getitem_2 = None
        permute_1 = torch.ops.aten.permute.default(view_2, [0, 2, 1, 3]);  view_2 = None
        view_3 = torch.ops.aten.view.default(getitem_3, [8, 128, 4, 64]);  getitem_3 = None
        permute_2 = torch.ops.aten.permute.default(view_3, [0, 2, 1, 3]);  view_3 = None
        view_4 = torch.ops.aten.view.default(getitem_4, [8, 128, 4, 64]);  getitem_4 = None
        permute_3 = torch.ops.aten.permute.default(view_4, [0, 2, 1, 3]);  view_4 = None
        _scaled_dot_product_cudnn_attention = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_1, permute_2, permute_3, None, True, 0.0, True)
        getitem_5 = _scaled_dot_product_cudnn_attention[0]
        getitem_6 = _scaled_dot_product_cudnn_attention[1]
        getitem_11 = _scaled_dot_product_cudnn_attention[6]
        getitem_12 = _scaled_dot_product_cudnn_attention[7];  _scaled_dot_product_cudnn_attention = None
        permute_4 = torch.ops.aten.permute.default(getitem_5, [0, 2, 1, 3])
        view_5 = torch.ops.aten.view.default(permute_4, [8, 128, 256]);  permute_4 = None
        convert_element_type_6 = torch.ops.prims.convert_element_type.default(primals_9, torch.bfloat16);  primals_9 = None
        convert_element_type_7 = torch.ops.prims.convert_element_type.default(primals_8, torch.bfloat16);  primals_8 = None
        view_6 = torch.ops.aten.view.default(view_5, [1024, 256]);  view_5 = None
        permute_5 = torch.ops.aten.permute.default(convert_element_type_7, [1, 0]);  convert_element_type_7 = None
        addmm_1 = torch.ops.aten.addmm.default(convert_element_type_6, view_6, permute_5);  convert_element_type_6 = view_6 = None
        view_7 = torch.ops.aten.view.default(addmm_1, [8, 128, 256]);  addmm_1 = None
        add_3 = torch.ops.aten.add.Tensor(add, view_7);  add = view_7 = None
        var_mean_1 = torch.ops.aten.var_mean.correction(add_3, [2], correction = 0, keepdim = True)
        getitem_14 = var_mean_1[0]
        getitem_15 = var_mean_1[1];  var_mean_1 = None
        add_4 = torch.ops.aten.add.Tensor(getitem_14, 1e-05);  getitem_14 = None
        rsqrt_1 = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        sub_1 = torch.ops.aten.sub.Tensor(add_3, getitem_15);  getitem_15 = None
        mul_2 = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = None
        mul_3 = torch.ops.aten.mul.Tensor(mul_2, primals_10)
        add_5 = torch.ops.aten.add.Tensor(mul_3, primals_11);  mul_3 = primals_11 = None
        convert_element_type_11 = torch.ops.prims.convert_element_type.default(primals_13, torch.bfloat16);  primals_13 = None
        convert_element_type_12 = torch.ops.prims.convert_element_type.default(primals_12, torch.bfloat16);  primals_12 = None
        convert_element_type_13 = torch.ops.prims.convert_element_type.default(add_5, torch.bfloat16);  add_5 = None
        view_8 = torch.ops.aten.view.default(convert_element_type_13, [1024, 256]);  convert_element_type_13 = None
        permute_6 = torch.ops.aten.permute.default(convert_element_type_12, [1, 0]);  convert_element_type_12 = None
        addmm_2 = torch.ops.aten.addmm.default(convert_element_type_11, view_8, permute_6);  convert_element_type_11 = None
        view_9 = torch.ops.aten.view.default(addmm_2, [8, 128, 1024])
        convert_element_type_17 = torch.ops.prims.convert_element_type.default(view_9, torch.float32);  view_9 = None
        mul_4 = torch.ops.aten.mul.Tensor(convert_element_type_17, 0.5)
        mul_5 = torch.ops.aten.mul.Tensor(convert_element_type_17, 0.7071067811865476);  convert_element_type_17 = None
        erf = torch.ops.aten.erf.default(mul_5);  mul_5 = None
        add_6 = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_6 = torch.ops.aten.mul.Tensor(mul_4, add_6);  mul_4 = add_6 = None
        convert_element_type_18 = torch.ops.prims.convert_element_type.default(mul_6, torch.bfloat16);  mul_6 = None
        convert_element_type_19 = torch.ops.prims.convert_element_type.default(primals_15, torch.bfloat16);  primals_15 = None
        convert_element_type_20 = torch.ops.prims.convert_element_type.default(primals_14, torch.bfloat16);  primals_14 = None
        view_10 = torch.ops.aten.view.default(convert_element_type_18, [1024, 1024]);  convert_element_type_18 = None
        permute_7 = torch.ops.aten.permute.default(convert_element_type_20, [1, 0]);  convert_element_type_20 = None
        addmm_3 = torch.ops.aten.addmm.default(convert_element_type_19, view_10, permute_7);  convert_element_type_19 = None
        view_11 = torch.ops.aten.view.default(addmm_3, [8, 128, 256]);  addmm_3 = None
        add_7 = torch.ops.aten.add.Tensor(add_3, view_11);  add_3 = view_11 = None
        var_mean_2 = torch.ops.aten.var_mean.correction(add_7, [2], correction = 0, keepdim = True)
        getitem_16 = var_mean_2[0]
        getitem_17 = var_mean_2[1];  var_mean_2 = None
        add_8 = torch.ops.aten.add.Tensor(getitem_16, 1e-05);  getitem_16 = None
        rsqrt_2 = torch.ops.aten.rsqrt.default(add_8);  add_8 = None
        sub_2 = torch.ops.aten.sub.Tensor(add_7, getitem_17);  getitem_17 = None
        mul_7 = torch.ops.aten.mul.Tensor(sub_2, rsqrt_2);  sub_2 = None
        mul_8 = torch.ops.aten.mul.Tensor(mul_7, primals_16)
        add_9 = torch.ops.aten.add.Tensor(mul_8, primals_17);  mul_8 = primals_17 = None
        convert_element_type_24 = torch.ops.prims.convert_element_type.default(primals_19, torch.bfloat16);  primals_19 = None
        convert_element_type_25 = torch.ops.prims.convert_element_type.default(primals_18, torch.bfloat16);  primals_18 = None
        convert_element_type_26 = torch.ops.prims.convert_element_type.default(add_9, torch.bfloat16);  add_9 = None
        view_12 = torch.ops.aten.view.default(convert_element_type_26, [1024, 256]);  convert_element_type_26 = None
        permute_8 = torch.ops.aten.permute.default(convert_element_type_25, [1, 0]);  convert_element_type_25 = None
        addmm_4 = torch.ops.aten.addmm.default(convert_element_type_24, view_12, permute_8);  convert_element_type_24 = None
        view_13 = torch.ops.aten.view.default(addmm_4, [8, 128, 768]);  addmm_4 = None
        split_1 = torch.ops.aten.split.Tensor(view_13, 256, 2);  view_13 = None
        getitem_18 = split_1[0]
        getitem_19 = split_1[1]
        getitem_20 = split_1[2];  split_1 = None
        view_14 = torch.ops.aten.view.default(getitem_18, [8, 128, 4, 64]);  getitem_18 = None
        permute_9 = torch.ops.aten.permute.default(view_14, [0, 2, 1, 3]);  view_14 = None
        view_15 = torch.ops.aten.view.default(getitem_19, [8, 128, 4, 64]);  getitem_19 = None
        permute_10 = torch.ops.aten.permute.default(view_15, [0, 2, 1, 3]);  view_15 = None
        view_16 = torch.ops.aten.view.default(getitem_20, [8, 128, 4, 64]);  getitem_20 = None
        permute_11 = torch.ops.aten.permute.default(view_16, [0, 2, 1, 3]);  view_16 = None
        _scaled_dot_product_cudnn_attention_1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_9, permute_10, permute_11, None, True, 0.0, True)
        getitem_21 = _scaled_dot_product_cudnn_attention_1[0]
        getitem_22 = _scaled_dot_product_cudnn_attention_1[1]
        getitem_27 = _scaled_dot_product_cudnn_attention_1[6]
        getitem_28 = _scaled_dot_product_cudnn_attention_1[7];  _scaled_dot_product_cudnn_attention_1 = None
        permute_12 = torch.ops.aten.permute.default(getitem_21, [0, 2, 1, 3])
        view_17 = torch.ops.aten.view.default(permute_12, [8, 128, 256]);  permute_12 = None
        convert_element_type_30 = torch.ops.prims.convert_element_type.default(primals_21, torch.bfloat16);  primals_21 = None
        convert_element_type_31 = torch.ops.prims.convert_element_type.default(primals_20, torch.bfloat16);  primals_20 = None
        view_18 = torch.ops.aten.view.default(view_17, [1024, 256]);  view_17 = None
        permute_13 = torch.ops.aten.permute.default(convert_element_type_31, [1, 0]);  convert_element_type_31 = None
        addmm_5 = torch.ops.aten.addmm.default(convert_element_type_30, view_18, permute_13);  convert_element_type_30 = view_18 = None
        view_19 = torch.ops.aten.view.default(addmm_5, [8, 128, 256]);  addmm_5 = None
        add_10 = torch.ops.aten.add.Tensor(add_7, view_19);  add_7 = view_19 = None
        var_mean_3 = torch.ops.aten.var_mean.correction(add_10, [2], correction = 0, keepdim = True)
        getitem_30 = var_mean_3[0]
        getitem_31 = var_mean_3[1];  var_mean_3 = None
        add_11 = torch.ops.aten.add.Tensor(getitem_30, 1e-05);  getitem_30 = None
        rsqrt_3 = torch.ops.aten.rsqrt.default(add_11);  add_11 = None
        sub_3 = torch.ops.aten.sub.Tensor(add_10, getitem_31);  getitem_31 = None
        mul_9 = torch.ops.aten.mul.Tensor(sub_3, rsqrt_3);  sub_3 = None
        mul_10 = torch.ops.aten.mul.Tensor(mul_9, primals_22)
        add_12 = torch.ops.aten.add.Tensor(mul_10, primals_23);  mul_10 = primals_23 = None
        convert_element_type_35 = torch.ops.prims.convert_element_type.default(primals_25, torch.bfloat16);  primals_25 = None
        convert_element_type_36 = torch.ops.prims.convert_element_type.default(primals_24, torch.bfloat16);  primals_24 = None
        convert_element_type_37 = torch.ops.prims.convert_element_type.default(add_12, torch.bfloat16);  add_12 = None
        view_20 = torch.ops.aten.view.default(convert_element_type_37, [1024, 256]);  convert_element_type_37 = None
        permute_14 = torch.ops.aten.permute.default(convert_element_type_36, [1, 0]);  convert_element_type_36 = None
        addmm_6 = torch.ops.aten.addmm.default(convert_element_type_35, view_20, permute_14);  convert_element_type_35 = None
        view_21 = torch.ops.aten.view.default(addmm_6, [8, 128, 1024])
        convert_element_type_41 = torch.ops.prims.convert_element_type.default(view_21, torch.float32);  view_21 = None
        mul_11 = torch.ops.aten.mul.Tensor(convert_element_type_41, 0.5)
        mul_12 = torch.ops.aten.mul.Tensor(convert_element_type_41, 0.7071067811865476);  convert_element_type_41 = None
        erf_1 = torch.ops.aten.erf.default(mul_12);  mul_12 = None
        add_13 = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_13 = torch.ops.aten.mul.Tensor(mul_11, add_13);  mul_11 = add_13 = None
        convert_element_type_42 = torch.ops.prims.convert_element_type.default(mul_13, torch.bfloat16);  mul_13 = None
        convert_element_type_43 = torch.ops.prims.convert_element_type.default(primals_27, torch.bfloat16);  primals_27 = None
        convert_element_type_44 = torch.ops.prims.convert_element_type.default(primals_26, torch.bfloat16);  primals_26 = None
        view_22 = torch.ops.aten.view.default(convert_element_type_42, [1024, 1024]);  convert_element_type_42 = None
        permute_15 = torch.ops.aten.permute.default(convert_element_type_44, [1, 0]);  convert_element_type_44 = None
        addmm_7 = torch.ops.aten.addmm.default(convert_element_type_43, view_22, permute_15);  convert_element_type_43 = None
        view_23 = torch.ops.aten.view.default(addmm_7, [8, 128, 256]);  addmm_7 = None
        add_14 = torch.ops.aten.add.Tensor(add_10, view_23);  add_10 = view_23 = None
        var_mean_4 = torch.ops.aten.var_mean.correction(add_14, [2], correction = 0, keepdim = True)
        getitem_32 = var_mean_4[0]
        getitem_33 = var_mean_4[1];  var_mean_4 = None
        add_15 = torch.ops.aten.add.Tensor(getitem_32, 1e-05);  getitem_32 = None
        rsqrt_4 = torch.ops.aten.rsqrt.default(add_15);  add_15 = None
        sub_4 = torch.ops.aten.sub.Tensor(add_14, getitem_33);  getitem_33 = None
        mul_14 = torch.ops.aten.mul.Tensor(sub_4, rsqrt_4);  sub_4 = None
        mul_15 = torch.ops.aten.mul.Tensor(mul_14, primals_28)
        add_16 = torch.ops.aten.add.Tensor(mul_15, primals_29);  mul_15 = primals_29 = None
        convert_element_type_48 = torch.ops.prims.convert_element_type.default(primals_31, torch.bfloat16);  primals_31 = None
        convert_element_type_49 = torch.ops.prims.convert_element_type.default(primals_30, torch.bfloat16);  primals_30 = None
        convert_element_type_50 = torch.ops.prims.convert_element_type.default(add_16, torch.bfloat16);  add_16 = None
        view_24 = torch.ops.aten.view.default(convert_element_type_50, [1024, 256]);  convert_element_type_50 = None
        permute_16 = torch.ops.aten.permute.default(convert_element_type_49, [1, 0]);  convert_element_type_49 = None
        addmm_8 = torch.ops.aten.addmm.default(convert_element_type_48, view_24, permute_16);  convert_element_type_48 = None
        view_25 = torch.ops.aten.view.default(addmm_8, [8, 128, 768]);  addmm_8 = None
        split_2 = torch.ops.aten.split.Tensor(view_25, 256, 2);  view_25 = None
        getitem_34 = split_2[0]
        getitem_35 = split_2[1]
        getitem_36 = split_2[2];  split_2 = None
        view_26 = torch.ops.aten.view.default(getitem_34, [8, 128, 4, 64]);  getitem_34 = None
        permute_17 = torch.ops.aten.permute.default(view_26, [0, 2, 1, 3]);  view_26 = None
        view_27 = torch.ops.aten.view.default(getitem_35, [8, 128, 4, 64]);  getitem_35 = None
        permute_18 = torch.ops.aten.permute.default(view_27, [0, 2, 1, 3]);  view_27 = None
        view_28 = torch.ops.aten.view.default(getitem_36, [8, 128, 4, 64]);  getitem_36 = None
        permute_19 = torch.ops.aten.permute.default(view_28, [0, 2, 1, 3]);  view_28 = None
        _scaled_dot_product_cudnn_attention_2 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_17, permute_18, permute_19, None, True, 0.0, True)
        getitem_37 = _scaled_dot_product_cudnn_attention_2[0]
        getitem_38 = _scaled_dot_product_cudnn_attention_2[1]
        getitem_43 = _scaled_dot_product_cudnn_attention_2[6]
        getitem_44 = _scaled_dot_product_cudnn_attention_2[7];  _scaled_dot_product_cudnn_attention_2 = None
        permute_20 = torch.ops.aten.permute.default(getitem_37, [0, 2, 1, 3])
        view_29 = torch.ops.aten.view.default(permute_20, [8, 128, 256]);  permute_20 = None
        convert_element_type_54 = torch.ops.prims.convert_element_type.default(primals_33, torch.bfloat16);  primals_33 = None
        convert_element_type_55 = torch.ops.prims.convert_element_type.default(primals_32, torch.bfloat16);  primals_32 = None
        view_30 = torch.ops.aten.view.default(view_29, [1024, 256]);  view_29 = None
        permute_21 = torch.ops.aten.permute.default(convert_element_type_55, [1, 0]);  convert_element_type_55 = None
        addmm_9 = torch.ops.aten.addmm.default(convert_element_type_54, view_30, permute_21);  convert_element_type_54 = view_30 = None
        view_31 = torch.ops.aten.view.default(addmm_9, [8, 128, 256]);  addmm_9 = None
        add_17 = torch.ops.aten.add.Tensor(add_14, view_31);  add_14 = view_31 = None
        var_mean_5 = torch.ops.aten.var_mean.correction(add_17, [2], correction = 0, keepdim = True)
        getitem_46 = var_mean_5[0]
        getitem_47 = var_mean_5[1];  var_mean_5 = None
        add_18 = torch.ops.aten.add.Tensor(getitem_46, 1e-05);  getitem_46 = None
        rsqrt_5 = torch.ops.aten.rsqrt.default(add_18);  add_18 = None
        sub_5 = torch.ops.aten.sub.Tensor(add_17, getitem_47);  getitem_47 = None
        mul_16 = torch.ops.aten.mul.Tensor(sub_5, rsqrt_5);  sub_5 = None
        mul_17 = torch.ops.aten.mul.Tensor(mul_16, primals_34)
        add_19 = torch.ops.aten.add.Tensor(mul_17, primals_35);  mul_17 = primals_35 = None
        convert_element_type_59 = torch.ops.prims.convert_element_type.default(primals_37, torch.bfloat16);  primals_37 = None
        convert_element_type_60 = torch.ops.prims.convert_element_type.default(primals_36, torch.bfloat16);  primals_36 = None
        convert_element_type_61 = torch.ops.prims.convert_element_type.default(add_19, torch.bfloat16);  add_19 = None
        view_32 = torch.ops.aten.view.default(convert_element_type_61, [1024, 256]);  convert_element_type_61 = None
        permute_22 = torch.ops.aten.permute.default(convert_element_type_60, [1, 0]);  convert_element_type_60 = None
        addmm_10 = torch.ops.aten.addmm.default(convert_element_type_59, view_32, permute_22);  convert_element_type_59 = None
        view_33 = torch.ops.aten.view.default(addmm_10, [8, 128, 1024])
        convert_element_type_65 = torch.ops.prims.convert_element_type.default(view_33, torch.float32);  view_33 = None
        mul_18 = torch.ops.aten.mul.Tensor(convert_element_type_65, 0.5)
        mul_19 = torch.ops.aten.mul.Tensor(convert_element_type_65, 0.7071067811865476);  convert_element_type_65 = None
        erf_2 = torch.ops.aten.erf.default(mul_19);  mul_19 = None
        add_20 = torch.ops.aten.add.Tensor(erf_2, 1);  erf_2 = None
        mul_20 = torch.ops.aten.mul.Tensor(mul_18, add_20);  mul_18 = add_20 = None
        convert_element_type_66 = torch.ops.prims.convert_element_type.default(mul_20, torch.bfloat16);  mul_20 = None
        convert_element_type_67 = torch.ops.prims.convert_element_type.default(primals_39, torch.bfloat16);  primals_39 = None
        convert_element_type_68 = torch.ops.prims.convert_element_type.default(primals_38, torch.bfloat16);  primals_38 = None
        view_34 = torch.ops.aten.view.default(convert_element_type_66, [1024, 1024]);  convert_element_type_66 = None
        permute_23 = torch.ops.aten.permute.default(convert_element_type_68, [1, 0]);  convert_element_type_68 = None
        addmm_11 = torch.ops.aten.addmm.default(convert_element_type_67, view_34, permute_23);  convert_element_type_67 = None
        view_35 = torch.ops.aten.view.default(addmm_11, [8, 128, 256]);  addmm_11 = None
        add_21 = torch.ops.aten.add.Tensor(add_17, view_35);  add_17 = view_35 = None
        var_mean_6 = torch.ops.aten.var_mean.correction(add_21, [2], correction = 0, keepdim = True)
        getitem_48 = var_mean_6[0]
        getitem_49 = var_mean_6[1];  var_mean_6 = None
        add_22 = torch.ops.aten.add.Tensor(getitem_48, 1e-05);  getitem_48 = None
        rsqrt_6 = torch.ops.aten.rsqrt.default(add_22);  add_22 = None
        sub_6 = torch.ops.aten.sub.Tensor(add_21, getitem_49);  getitem_49 = None
        mul_21 = torch.ops.aten.mul.Tensor(sub_6, rsqrt_6);  sub_6 = None
        mul_22 = torch.ops.aten.mul.Tensor(mul_21, primals_40)
        add_23 = torch.ops.aten.add.Tensor(mul_22, primals_41);  mul_22 = primals_41 = None
        convert_element_type_72 = torch.ops.prims.convert_element_type.default(primals_43, torch.bfloat16);  primals_43 = None
        convert_element_type_73 = torch.ops.prims.convert_element_type.default(primals_42, torch.bfloat16);  primals_42 = None
        convert_element_type_74 = torch.ops.prims.convert_element_type.default(add_23, torch.bfloat16);  add_23 = None
        view_36 = torch.ops.aten.view.default(convert_element_type_74, [1024, 256]);  convert_element_type_74 = None
        permute_24 = torch.ops.aten.permute.default(convert_element_type_73, [1, 0]);  convert_element_type_73 = None
        addmm_12 = torch.ops.aten.addmm.default(convert_element_type_72, view_36, permute_24);  convert_element_type_72 = None
        view_37 = torch.ops.aten.view.default(addmm_12, [8, 128, 768]);  addmm_12 = None
        split_3 = torch.ops.aten.split.Tensor(view_37, 256, 2);  view_37 = None
        getitem_50 = split_3[0]
        getitem_51 = split_3[1]
        getitem_52 = split_3[2];  split_3 = None
        view_38 = torch.ops.aten.view.default(getitem_50, [8, 128, 4, 64]);  getitem_50 = None
        permute_25 = torch.ops.aten.permute.default(view_38, [0, 2, 1, 3]);  view_38 = None
        view_39 = torch.ops.aten.view.default(getitem_51, [8, 128, 4, 64]);  getitem_51 = None
        permute_26 = torch.ops.aten.permute.default(view_39, [0, 2, 1, 3]);  view_39 = None
        view_40 = torch.ops.aten.view.default(getitem_52, [8, 128, 4, 64]);  getitem_52 = None
        permute_27 = torch.ops.aten.permute.default(view_40, [0, 2, 1, 3]);  view_40 = None
        _scaled_dot_product_cudnn_attention_3 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_25, permute_26, permute_27, None, True, 0.0, True)
        getitem_53 = _scaled_dot_product_cudnn_attention_3[0]
        getitem_54 = _scaled_dot_product_cudnn_attention_3[1]
        getitem_59 = _scaled_dot_product_cudnn_attention_3[6]
        getitem_60 = _scaled_dot_product_cudnn_attention_3[7];  _scaled_dot_product_cudnn_attention_3 = None
        permute_28 = torch.ops.aten.permute.default(getitem_53, [0, 2, 1, 3])
        view_41 = torch.ops.aten.view.default(permute_28, [8, 128, 256]);  permute_28 = None
        convert_element_type_78 = torch.ops.prims.convert_element_type.default(primals_45, torch.bfloat16);  primals_45 = None
        convert_element_type_79 = torch.ops.prims.convert_element_type.default(primals_44, torch.bfloat16);  primals_44 = None
        view_42 = torch.ops.aten.view.default(view_41, [1024, 256]);  view_41 = None
        permute_29 = torch.ops.aten.permute.default(convert_element_type_79, [1, 0]);  convert_element_type_79 = None
        addmm_13 = torch.ops.aten.addmm.default(convert_element_type_78, view_42, permute_29);  convert_element_type_78 = view_42 = None
        view_43 = torch.ops.aten.view.default(addmm_13, [8, 128, 256]);  addmm_13 = None
        add_24 = torch.ops.aten.add.Tensor(add_21, view_43);  add_21 = view_43 = None
        var_mean_7 = torch.ops.aten.var_mean.correction(add_24, [2], correction = 0, keepdim = True)
        getitem_62 = var_mean_7[0]
        getitem_63 = var_mean_7[1];  var_mean_7 = None
        add_25 = torch.ops.aten.add.Tensor(getitem_62, 1e-05);  getitem_62 = None
        rsqrt_7 = torch.ops.aten.rsqrt.default(add_25);  add_25 = None
        sub_7 = torch.ops.aten.sub.Tensor(add_24, getitem_63);  getitem_63 = None
        mul_23 = torch.ops.aten.mul.Tensor(sub_7, rsqrt_7);  sub_7 = None
        mul_24 = torch.ops.aten.mul.Tensor(mul_23, primals_46)
        add_26 = torch.ops.aten.add.Tensor(mul_24, primals_47);  mul_24 = primals_47 = None
        convert_element_type_83 = torch.ops.prims.convert_element_type.default(primals_49, torch.bfloat16);  primals_49 = None
        convert_element_type_84 = torch.ops.prims.convert_element_type.default(primals_48, torch.bfloat16);  primals_48 = None
        convert_element_type_85 = torch.ops.prims.convert_element_type.default(add_26, torch.bfloat16);  add_26 = None
        view_44 = torch.ops.aten.view.default(convert_element_type_85, [1024, 256]);  convert_element_type_85 = None
        permute_30 = torch.ops.aten.permute.default(convert_element_type_84, [1, 0]);  convert_element_type_84 = None
        addmm_14 = torch.ops.aten.addmm.default(convert_element_type_83, view_44, permute_30);  convert_element_type_83 = None
        view_45 = torch.ops.aten.view.default(addmm_14, [8, 128, 1024])
        convert_element_type_89 = torch.ops.prims.convert_element_type.default(view_45, torch.float32);  view_45 = None
        mul_25 = torch.ops.aten.mul.Tensor(convert_element_type_89, 0.5)
        mul_26 = torch.ops.aten.mul.Tensor(convert_element_type_89, 0.7071067811865476);  convert_element_type_89 = None
        erf_3 = torch.ops.aten.erf.default(mul_26);  mul_26 = None
        add_27 = torch.ops.aten.add.Tensor(erf_3, 1);  erf_3 = None
        mul_27 = torch.ops.aten.mul.Tensor(mul_25, add_27);  mul_25 = add_27 = None
        convert_element_type_90 = torch.ops.prims.convert_element_type.default(mul_27, torch.bfloat16);  mul_27 = None
        convert_element_type_91 = torch.ops.prims.convert_element_type.default(primals_51, torch.bfloat16);  primals_51 = None
        convert_element_type_92 = torch.ops.prims.convert_element_type.default(primals_50, torch.bfloat16);  primals_50 = None
        view_46 = torch.ops.aten.view.default(convert_element_type_90, [1024, 1024]);  convert_element_type_90 = None
        permute_31 = torch.ops.aten.permute.default(convert_element_type_92, [1, 0]);  convert_element_type_92 = None
        addmm_15 = torch.ops.aten.addmm.default(convert_element_type_91, view_46, permute_31);  convert_element_type_91 = None
        view_47 = torch.ops.aten.view.default(addmm_15, [8, 128, 256]);  addmm_15 = None
        add_28 = torch.ops.aten.add.Tensor(add_24, view_47);  add_24 = view_47 = None
        var_mean_8 = torch.ops.aten.var_mean.correction(add_28, [2], correction = 0, keepdim = True)
        getitem_64 = var_mean_8[0]
        getitem_65 = var_mean_8[1];  var_mean_8 = None
        add_29 = torch.ops.aten.add.Tensor(getitem_64, 1e-05);  getitem_64 = None
        rsqrt_8 = torch.ops.aten.rsqrt.default(add_29);  add_29 = None
        sub_8 = torch.ops.aten.sub.Tensor(add_28, getitem_65);  add_28 = getitem_65 = None
        mul_28 = torch.ops.aten.mul.Tensor(sub_8, rsqrt_8);  sub_8 = None
        mul_29 = torch.ops.aten.mul.Tensor(mul_28, primals_52)
        add_30 = torch.ops.aten.add.Tensor(mul_29, primals_53);  mul_29 = primals_53 = None
        convert_element_type_96 = torch.ops.prims.convert_element_type.default(primals_54, torch.bfloat16);  primals_54 = None
        convert_element_type_97 = torch.ops.prims.convert_element_type.default(add_30, torch.bfloat16);  add_30 = None
        permute_32 = torch.ops.aten.permute.default(convert_element_type_96, [1, 0]);  convert_element_type_96 = None
        view_48 = torch.ops.aten.view.default(convert_element_type_97, [1024, 256]);  convert_element_type_97 = None
        mm = torch.ops.aten.mm.default(view_48, permute_32)
        view_49 = torch.ops.aten.view.default(mm, [8, 128, 1024]);  mm = None
        permute_35 = torch.ops.aten.permute.default(permute_32, [1, 0]);  permute_32 = None
        div = torch.ops.aten.div.Tensor(rsqrt_8, 256);  rsqrt_8 = None
        permute_37 = torch.ops.aten.permute.default(permute_31, [1, 0]);  permute_31 = None
        permute_41 = torch.ops.aten.permute.default(permute_30, [1, 0]);  permute_30 = None
        div_1 = torch.ops.aten.div.Tensor(rsqrt_7, 256);  rsqrt_7 = None
        permute_45 = torch.ops.aten.permute.default(permute_29, [1, 0]);  permute_29 = None
        permute_53 = torch.ops.aten.permute.default(permute_24, [1, 0]);  permute_24 = None
        div_2 = torch.ops.aten.div.Tensor(rsqrt_6, 256);  rsqrt_6 = None
        permute_57 = torch.ops.aten.permute.default(permute_23, [1, 0]);  permute_23 = None
        permute_61 = torch.ops.aten.permute.default(permute_22, [1, 0]);  permute_22 = None
        div_3 = torch.ops.aten.div.Tensor(rsqrt_5, 256);  rsqrt_5 = None
        permute_65 = torch.ops.aten.permute.default(permute_21, [1, 0]);  permute_21 = None
        permute_73 = torch.ops.aten.permute.default(permute_16, [1, 0]);  permute_16 = None
        div_4 = torch.ops.aten.div.Tensor(rsqrt_4, 256);  rsqrt_4 = None
        permute_77 = torch.ops.aten.permute.default(permute_15, [1, 0]);  permute_15 = None
        permute_81 = torch.ops.aten.permute.default(permute_14, [1, 0]);  permute_14 = None
        div_5 = torch.ops.aten.div.Tensor(rsqrt_3, 256);  rsqrt_3 = None
        permute_85 = torch.ops.aten.permute.default(permute_13, [1, 0]);  permute_13 = None
        permute_93 = torch.ops.aten.permute.default(permute_8, [1, 0]);  permute_8 = None
        div_6 = torch.ops.aten.div.Tensor(rsqrt_2, 256);  rsqrt_2 = None
        permute_97 = torch.ops.aten.permute.default(permute_7, [1, 0]);  permute_7 = None
        permute_101 = torch.ops.aten.permute.default(permute_6, [1, 0]);  permute_6 = None
        div_7 = torch.ops.aten.div.Tensor(rsqrt_1, 256);  rsqrt_1 = None
        permute_105 = torch.ops.aten.permute.default(permute_5, [1, 0]);  permute_5 = None
        permute_113 = torch.ops.aten.permute.default(permute, [1, 0]);  permute = None
        return (view_49, primals_2, primals_4, primals_10, primals_16, primals_22, primals_28, primals_34, primals_40, primals_46, primals_52, embedding, iota, embedding_1, getitem_1, rsqrt, view, permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, mul_2, view_8, addmm_2, view_10, mul_7, view_12, permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, mul_9, view_20, addmm_6, view_22, mul_14, view_24, permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, mul_16, view_32, addmm_10, view_34, mul_21, view_36, permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, mul_23, view_44, addmm_14, view_46, mul_28, view_48, permute_35, div, permute_37, permute_41, div_1, permute_45, permute_53, div_2, permute_57, permute_61, div_3, permute_65, permute_73, div_4, permute_77, permute_81, div_5, permute_85, permute_93, div_6, permute_97, permute_101, div_7, permute_105, permute_113)

def load_args(reader):
    buf0 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf0, (1024, 256), is_leaf=True)  # primals_1
    buf1 = reader.storage(None, 8192, device=device(type='cuda', index=0), dtype_hint=torch.int64)
    reader.tensor(buf1, (8, 128), dtype=torch.int64, is_leaf=True)  # primals_2
    buf2 = reader.storage(None, 131072, device=device(type='cuda', index=0))
    reader.tensor(buf2, (128, 256), is_leaf=True)  # primals_3
    buf3 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf3, (256,), is_leaf=True)  # primals_4
    buf4 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf4, (256,), is_leaf=True)  # primals_5
    buf5 = reader.storage(None, 786432, device=device(type='cuda', index=0))
    reader.tensor(buf5, (768, 256), is_leaf=True)  # primals_6
    buf6 = reader.storage(None, 3072, device=device(type='cuda', index=0))
    reader.tensor(buf6, (768,), is_leaf=True)  # primals_7
    buf7 = reader.storage(None, 262144, device=device(type='cuda', index=0))
    reader.tensor(buf7, (256, 256), is_leaf=True)  # primals_8
    buf8 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf8, (256,), is_leaf=True)  # primals_9
    buf9 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf9, (256,), is_leaf=True)  # primals_10
    buf10 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf10, (256,), is_leaf=True)  # primals_11
    buf11 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf11, (1024, 256), is_leaf=True)  # primals_12
    buf12 = reader.storage(None, 4096, device=device(type='cuda', index=0))
    reader.tensor(buf12, (1024,), is_leaf=True)  # primals_13
    buf13 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf13, (256, 1024), is_leaf=True)  # primals_14
    buf14 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf14, (256,), is_leaf=True)  # primals_15
    buf15 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf15, (256,), is_leaf=True)  # primals_16
    buf16 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf16, (256,), is_leaf=True)  # primals_17
    buf17 = reader.storage(None, 786432, device=device(type='cuda', index=0))
    reader.tensor(buf17, (768, 256), is_leaf=True)  # primals_18
    buf18 = reader.storage(None, 3072, device=device(type='cuda', index=0))
    reader.tensor(buf18, (768,), is_leaf=True)  # primals_19
    buf19 = reader.storage(None, 262144, device=device(type='cuda', index=0))
    reader.tensor(buf19, (256, 256), is_leaf=True)  # primals_20
    buf20 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf20, (256,), is_leaf=True)  # primals_21
    buf21 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf21, (256,), is_leaf=True)  # primals_22
    buf22 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf22, (256,), is_leaf=True)  # primals_23
    buf23 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf23, (1024, 256), is_leaf=True)  # primals_24
    buf24 = reader.storage(None, 4096, device=device(type='cuda', index=0))
    reader.tensor(buf24, (1024,), is_leaf=True)  # primals_25
    buf25 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf25, (256, 1024), is_leaf=True)  # primals_26
    buf26 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf26, (256,), is_leaf=True)  # primals_27
    buf27 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf27, (256,), is_leaf=True)  # primals_28
    buf28 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf28, (256,), is_leaf=True)  # primals_29
    buf29 = reader.storage(None, 786432, device=device(type='cuda', index=0))
    reader.tensor(buf29, (768, 256), is_leaf=True)  # primals_30
    buf30 = reader.storage(None, 3072, device=device(type='cuda', index=0))
    reader.tensor(buf30, (768,), is_leaf=True)  # primals_31
    buf31 = reader.storage(None, 262144, device=device(type='cuda', index=0))
    reader.tensor(buf31, (256, 256), is_leaf=True)  # primals_32
    buf32 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf32, (256,), is_leaf=True)  # primals_33
    buf33 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf33, (256,), is_leaf=True)  # primals_34
    buf34 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf34, (256,), is_leaf=True)  # primals_35
    buf35 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf35, (1024, 256), is_leaf=True)  # primals_36
    buf36 = reader.storage(None, 4096, device=device(type='cuda', index=0))
    reader.tensor(buf36, (1024,), is_leaf=True)  # primals_37
    buf37 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf37, (256, 1024), is_leaf=True)  # primals_38
    buf38 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf38, (256,), is_leaf=True)  # primals_39
    buf39 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf39, (256,), is_leaf=True)  # primals_40
    buf40 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf40, (256,), is_leaf=True)  # primals_41
    buf41 = reader.storage(None, 786432, device=device(type='cuda', index=0))
    reader.tensor(buf41, (768, 256), is_leaf=True)  # primals_42
    buf42 = reader.storage(None, 3072, device=device(type='cuda', index=0))
    reader.tensor(buf42, (768,), is_leaf=True)  # primals_43
    buf43 = reader.storage(None, 262144, device=device(type='cuda', index=0))
    reader.tensor(buf43, (256, 256), is_leaf=True)  # primals_44
    buf44 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf44, (256,), is_leaf=True)  # primals_45
    buf45 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf45, (256,), is_leaf=True)  # primals_46
    buf46 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf46, (256,), is_leaf=True)  # primals_47
    buf47 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf47, (1024, 256), is_leaf=True)  # primals_48
    buf48 = reader.storage(None, 4096, device=device(type='cuda', index=0))
    reader.tensor(buf48, (1024,), is_leaf=True)  # primals_49
    buf49 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf49, (256, 1024), is_leaf=True)  # primals_50
    buf50 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf50, (256,), is_leaf=True)  # primals_51
    buf51 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf51, (256,), is_leaf=True)  # primals_52
    buf52 = reader.storage(None, 1024, device=device(type='cuda', index=0))
    reader.tensor(buf52, (256,), is_leaf=True)  # primals_53
    buf53 = reader.storage(None, 1048576, device=device(type='cuda', index=0))
    reader.tensor(buf53, (1024, 256), is_leaf=True)  # primals_54
load_args._version = 0
mod = Repro()
if __name__ == '__main__':
    from torch._dynamo.repro.after_aot import run_repro
    with torch.no_grad():
        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real', check_str=None)
        # To run it separately, do 
        # mod, args = run_repro(mod, load_args, accuracy=False, command='get_args', save_dir=None, tracing_mode='real', check_str=None)
        # mod(*args)