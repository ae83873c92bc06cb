class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[1024, 256]", primals_2: "i64[8, 128]", primals_3: "f32[128, 256]", primals_4: "f32[256]", primals_5: "f32[256]", primals_6: "f32[768, 256]", primals_7: "f32[768]", primals_8: "f32[256, 256]", primals_9: "f32[256]", primals_10: "f32[256]", primals_11: "f32[256]", primals_12: "f32[1024, 256]", primals_13: "f32[1024]", primals_14: "f32[256, 1024]", primals_15: "f32[256]", primals_16: "f32[256]", primals_17: "f32[256]", primals_18: "f32[768, 256]", primals_19: "f32[768]", primals_20: "f32[256, 256]", primals_21: "f32[256]", primals_22: "f32[256]", primals_23: "f32[256]", primals_24: "f32[1024, 256]", primals_25: "f32[1024]", primals_26: "f32[256, 1024]", primals_27: "f32[256]", primals_28: "f32[256]", primals_29: "f32[256]", primals_30: "f32[768, 256]", primals_31: "f32[768]", primals_32: "f32[256, 256]", primals_33: "f32[256]", primals_34: "f32[256]", primals_35: "f32[256]", primals_36: "f32[1024, 256]", primals_37: "f32[1024]", primals_38: "f32[256, 1024]", primals_39: "f32[256]", primals_40: "f32[256]", primals_41: "f32[256]", primals_42: "f32[768, 256]", primals_43: "f32[768]", primals_44: "f32[256, 256]", primals_45: "f32[256]", primals_46: "f32[256]", primals_47: "f32[256]", primals_48: "f32[1024, 256]", primals_49: "f32[1024]", primals_50: "f32[256, 1024]", primals_51: "f32[256]", primals_52: "f32[256]", primals_53: "f32[256]", primals_54: "f32[1024, 256]"):
        # File: /work/main/scripts/gpu/record_attribution.py:84 in forward, code: x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        embedding: "f32[8, 128, 256]" = torch.ops.aten.embedding.default(primals_1, primals_2);  primals_1 = None
        iota: "i64[128]" = torch.ops.prims.iota.default(128, start = 0, step = 1, dtype = torch.int64, device = device(type='cuda', index=0), requires_grad = False)
        embedding_1: "f32[128, 256]" = torch.ops.aten.embedding.default(primals_3, iota);  primals_3 = None
        add: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(embedding, embedding_1)

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        var_mean = torch.ops.aten.var_mean.correction(add, [2], correction = 0, keepdim = True)
        getitem: "f32[8, 128, 1]" = var_mean[0]
        getitem_1: "f32[8, 128, 1]" = var_mean[1];  var_mean = None
        add_1: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_1);  add_1 = None
        sub: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add, getitem_1)
        mul: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = None
        mul_1: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul, primals_4);  mul = None
        add_2: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_1, primals_5);  mul_1 = primals_5 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        convert_element_type: "bf16[768]" = torch.ops.prims.convert_element_type.default(primals_7, torch.bfloat16);  primals_7 = None
        convert_element_type_1: "bf16[768, 256]" = torch.ops.prims.convert_element_type.default(primals_6, torch.bfloat16);  primals_6 = None
        convert_element_type_2: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_2, torch.bfloat16);  add_2 = None
        view: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_2, [1024, 256]);  convert_element_type_2 = None
        permute: "bf16[256, 768]" = torch.ops.aten.permute.default(convert_element_type_1, [1, 0]);  convert_element_type_1 = None
        addmm: "bf16[1024, 768]" = torch.ops.aten.addmm.default(convert_element_type, view, permute);  convert_element_type = None
        view_1: "bf16[8, 128, 768]" = torch.ops.aten.view.default(addmm, [8, 128, 768]);  addmm = None
        split = torch.ops.aten.split.Tensor(view_1, 256, 2);  view_1 = None
        getitem_2: "bf16[8, 128, 256]" = split[0]
        getitem_3: "bf16[8, 128, 256]" = split[1]
        getitem_4: "bf16[8, 128, 256]" = split[2];  split = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        view_2: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_2, [8, 128, 4, 64]);  getitem_2 = None
        permute_1: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_2, [0, 2, 1, 3]);  view_2 = None
        view_3: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_3, [8, 128, 4, 64]);  getitem_3 = None
        permute_2: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_3, [0, 2, 1, 3]);  view_3 = None
        view_4: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_4, [8, 128, 4, 64]);  getitem_4 = None
        permute_3: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_4, [0, 2, 1, 3]);  view_4 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_1, permute_2, permute_3, None, True, 0.0, True)
        getitem_5: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention[0]
        getitem_6: "f32[8, 4, 128, 1]" = _scaled_dot_product_cudnn_attention[1]
        getitem_11: "i64[]" = _scaled_dot_product_cudnn_attention[6]
        getitem_12: "i64[]" = _scaled_dot_product_cudnn_attention[7];  _scaled_dot_product_cudnn_attention = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_4: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_5, [0, 2, 1, 3])
        view_5: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_4, [8, 128, 256]);  permute_4 = None
        convert_element_type_6: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_9, torch.bfloat16);  primals_9 = None
        convert_element_type_7: "bf16[256, 256]" = torch.ops.prims.convert_element_type.default(primals_8, torch.bfloat16);  primals_8 = None
        view_6: "bf16[1024, 256]" = torch.ops.aten.view.default(view_5, [1024, 256]);  view_5 = None
        permute_5: "bf16[256, 256]" = torch.ops.aten.permute.default(convert_element_type_7, [1, 0]);  convert_element_type_7 = None
        addmm_1: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_6, view_6, permute_5);  convert_element_type_6 = view_6 = None
        view_7: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_1, [8, 128, 256]);  addmm_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        add_3: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add, view_7);  add = view_7 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        var_mean_1 = torch.ops.aten.var_mean.correction(add_3, [2], correction = 0, keepdim = True)
        getitem_14: "f32[8, 128, 1]" = var_mean_1[0]
        getitem_15: "f32[8, 128, 1]" = var_mean_1[1];  var_mean_1 = None
        add_4: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_14, 1e-05);  getitem_14 = None
        rsqrt_1: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        sub_1: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_3, getitem_15);  getitem_15 = None
        mul_2: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = None
        mul_3: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_2, primals_10)
        add_5: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_3, primals_11);  mul_3 = primals_11 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        convert_element_type_11: "bf16[1024]" = torch.ops.prims.convert_element_type.default(primals_13, torch.bfloat16);  primals_13 = None
        convert_element_type_12: "bf16[1024, 256]" = torch.ops.prims.convert_element_type.default(primals_12, torch.bfloat16);  primals_12 = None
        convert_element_type_13: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_5, torch.bfloat16);  add_5 = None
        view_8: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_13, [1024, 256]);  convert_element_type_13 = None
        permute_6: "bf16[256, 1024]" = torch.ops.aten.permute.default(convert_element_type_12, [1, 0]);  convert_element_type_12 = None
        addmm_2: "bf16[1024, 1024]" = torch.ops.aten.addmm.default(convert_element_type_11, view_8, permute_6);  convert_element_type_11 = None
        view_9: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_2, [8, 128, 1024])
        convert_element_type_17: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_9, torch.float32);  view_9 = None
        mul_4: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_17, 0.5)
        mul_5: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_17, 0.7071067811865476);  convert_element_type_17 = None
        erf: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_5);  mul_5 = None
        add_6: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_6: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_4, add_6);  mul_4 = add_6 = None
        convert_element_type_18: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_6, torch.bfloat16);  mul_6 = None
        convert_element_type_19: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_15, torch.bfloat16);  primals_15 = None
        convert_element_type_20: "bf16[256, 1024]" = torch.ops.prims.convert_element_type.default(primals_14, torch.bfloat16);  primals_14 = None
        view_10: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_18, [1024, 1024]);  convert_element_type_18 = None
        permute_7: "bf16[1024, 256]" = torch.ops.aten.permute.default(convert_element_type_20, [1, 0]);  convert_element_type_20 = None
        addmm_3: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_19, view_10, permute_7);  convert_element_type_19 = None
        view_11: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_3, [8, 128, 256]);  addmm_3 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        add_7: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_3, view_11);  add_3 = view_11 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        var_mean_2 = torch.ops.aten.var_mean.correction(add_7, [2], correction = 0, keepdim = True)
        getitem_16: "f32[8, 128, 1]" = var_mean_2[0]
        getitem_17: "f32[8, 128, 1]" = var_mean_2[1];  var_mean_2 = None
        add_8: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_16, 1e-05);  getitem_16 = None
        rsqrt_2: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_8);  add_8 = None
        sub_2: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_7, getitem_17);  getitem_17 = None
        mul_7: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_2, rsqrt_2);  sub_2 = None
        mul_8: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_7, primals_16)
        add_9: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_8, primals_17);  mul_8 = primals_17 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        convert_element_type_24: "bf16[768]" = torch.ops.prims.convert_element_type.default(primals_19, torch.bfloat16);  primals_19 = None
        convert_element_type_25: "bf16[768, 256]" = torch.ops.prims.convert_element_type.default(primals_18, torch.bfloat16);  primals_18 = None
        convert_element_type_26: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_9, torch.bfloat16);  add_9 = None
        view_12: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_26, [1024, 256]);  convert_element_type_26 = None
        permute_8: "bf16[256, 768]" = torch.ops.aten.permute.default(convert_element_type_25, [1, 0]);  convert_element_type_25 = None
        addmm_4: "bf16[1024, 768]" = torch.ops.aten.addmm.default(convert_element_type_24, view_12, permute_8);  convert_element_type_24 = None
        view_13: "bf16[8, 128, 768]" = torch.ops.aten.view.default(addmm_4, [8, 128, 768]);  addmm_4 = None
        split_1 = torch.ops.aten.split.Tensor(view_13, 256, 2);  view_13 = None
        getitem_18: "bf16[8, 128, 256]" = split_1[0]
        getitem_19: "bf16[8, 128, 256]" = split_1[1]
        getitem_20: "bf16[8, 128, 256]" = split_1[2];  split_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        view_14: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_18, [8, 128, 4, 64]);  getitem_18 = None
        permute_9: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_14, [0, 2, 1, 3]);  view_14 = None
        view_15: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_19, [8, 128, 4, 64]);  getitem_19 = None
        permute_10: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_15, [0, 2, 1, 3]);  view_15 = None
        view_16: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_20, [8, 128, 4, 64]);  getitem_20 = None
        permute_11: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_16, [0, 2, 1, 3]);  view_16 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_1 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_9, permute_10, permute_11, None, True, 0.0, True)
        getitem_21: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_1[0]
        getitem_22: "f32[8, 4, 128, 1]" = _scaled_dot_product_cudnn_attention_1[1]
        getitem_27: "i64[]" = _scaled_dot_product_cudnn_attention_1[6]
        getitem_28: "i64[]" = _scaled_dot_product_cudnn_attention_1[7];  _scaled_dot_product_cudnn_attention_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_12: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_21, [0, 2, 1, 3])
        view_17: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_12, [8, 128, 256]);  permute_12 = None
        convert_element_type_30: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_21, torch.bfloat16);  primals_21 = None
        convert_element_type_31: "bf16[256, 256]" = torch.ops.prims.convert_element_type.default(primals_20, torch.bfloat16);  primals_20 = None
        view_18: "bf16[1024, 256]" = torch.ops.aten.view.default(view_17, [1024, 256]);  view_17 = None
        permute_13: "bf16[256, 256]" = torch.ops.aten.permute.default(convert_element_type_31, [1, 0]);  convert_element_type_31 = None
        addmm_5: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_30, view_18, permute_13);  convert_element_type_30 = view_18 = None
        view_19: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_5, [8, 128, 256]);  addmm_5 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        add_10: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_7, view_19);  add_7 = view_19 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        var_mean_3 = torch.ops.aten.var_mean.correction(add_10, [2], correction = 0, keepdim = True)
        getitem_30: "f32[8, 128, 1]" = var_mean_3[0]
        getitem_31: "f32[8, 128, 1]" = var_mean_3[1];  var_mean_3 = None
        add_11: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_30, 1e-05);  getitem_30 = None
        rsqrt_3: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_11);  add_11 = None
        sub_3: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_10, getitem_31);  getitem_31 = None
        mul_9: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_3, rsqrt_3);  sub_3 = None
        mul_10: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_9, primals_22)
        add_12: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_10, primals_23);  mul_10 = primals_23 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        convert_element_type_35: "bf16[1024]" = torch.ops.prims.convert_element_type.default(primals_25, torch.bfloat16);  primals_25 = None
        convert_element_type_36: "bf16[1024, 256]" = torch.ops.prims.convert_element_type.default(primals_24, torch.bfloat16);  primals_24 = None
        convert_element_type_37: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_12, torch.bfloat16);  add_12 = None
        view_20: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_37, [1024, 256]);  convert_element_type_37 = None
        permute_14: "bf16[256, 1024]" = torch.ops.aten.permute.default(convert_element_type_36, [1, 0]);  convert_element_type_36 = None
        addmm_6: "bf16[1024, 1024]" = torch.ops.aten.addmm.default(convert_element_type_35, view_20, permute_14);  convert_element_type_35 = None
        view_21: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_6, [8, 128, 1024])
        convert_element_type_41: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_21, torch.float32);  view_21 = None
        mul_11: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_41, 0.5)
        mul_12: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_41, 0.7071067811865476);  convert_element_type_41 = None
        erf_1: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_12);  mul_12 = None
        add_13: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_13: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_11, add_13);  mul_11 = add_13 = None
        convert_element_type_42: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_13, torch.bfloat16);  mul_13 = None
        convert_element_type_43: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_27, torch.bfloat16);  primals_27 = None
        convert_element_type_44: "bf16[256, 1024]" = torch.ops.prims.convert_element_type.default(primals_26, torch.bfloat16);  primals_26 = None
        view_22: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_42, [1024, 1024]);  convert_element_type_42 = None
        permute_15: "bf16[1024, 256]" = torch.ops.aten.permute.default(convert_element_type_44, [1, 0]);  convert_element_type_44 = None
        addmm_7: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_43, view_22, permute_15);  convert_element_type_43 = None
        view_23: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_7, [8, 128, 256]);  addmm_7 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        add_14: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_10, view_23);  add_10 = view_23 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        var_mean_4 = torch.ops.aten.var_mean.correction(add_14, [2], correction = 0, keepdim = True)
        getitem_32: "f32[8, 128, 1]" = var_mean_4[0]
        getitem_33: "f32[8, 128, 1]" = var_mean_4[1];  var_mean_4 = None
        add_15: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_32, 1e-05);  getitem_32 = None
        rsqrt_4: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_15);  add_15 = None
        sub_4: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_14, getitem_33);  getitem_33 = None
        mul_14: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_4, rsqrt_4);  sub_4 = None
        mul_15: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_14, primals_28)
        add_16: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_15, primals_29);  mul_15 = primals_29 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        convert_element_type_48: "bf16[768]" = torch.ops.prims.convert_element_type.default(primals_31, torch.bfloat16);  primals_31 = None
        convert_element_type_49: "bf16[768, 256]" = torch.ops.prims.convert_element_type.default(primals_30, torch.bfloat16);  primals_30 = None
        convert_element_type_50: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_16, torch.bfloat16);  add_16 = None
        view_24: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_50, [1024, 256]);  convert_element_type_50 = None
        permute_16: "bf16[256, 768]" = torch.ops.aten.permute.default(convert_element_type_49, [1, 0]);  convert_element_type_49 = None
        addmm_8: "bf16[1024, 768]" = torch.ops.aten.addmm.default(convert_element_type_48, view_24, permute_16);  convert_element_type_48 = None
        view_25: "bf16[8, 128, 768]" = torch.ops.aten.view.default(addmm_8, [8, 128, 768]);  addmm_8 = None
        split_2 = torch.ops.aten.split.Tensor(view_25, 256, 2);  view_25 = None
        getitem_34: "bf16[8, 128, 256]" = split_2[0]
        getitem_35: "bf16[8, 128, 256]" = split_2[1]
        getitem_36: "bf16[8, 128, 256]" = split_2[2];  split_2 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        view_26: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_34, [8, 128, 4, 64]);  getitem_34 = None
        permute_17: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_26, [0, 2, 1, 3]);  view_26 = None
        view_27: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_35, [8, 128, 4, 64]);  getitem_35 = None
        permute_18: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_27, [0, 2, 1, 3]);  view_27 = None
        view_28: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_36, [8, 128, 4, 64]);  getitem_36 = None
        permute_19: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_28, [0, 2, 1, 3]);  view_28 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_2 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_17, permute_18, permute_19, None, True, 0.0, True)
        getitem_37: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_2[0]
        getitem_38: "f32[8, 4, 128, 1]" = _scaled_dot_product_cudnn_attention_2[1]
        getitem_43: "i64[]" = _scaled_dot_product_cudnn_attention_2[6]
        getitem_44: "i64[]" = _scaled_dot_product_cudnn_attention_2[7];  _scaled_dot_product_cudnn_attention_2 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_20: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_37, [0, 2, 1, 3])
        view_29: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_20, [8, 128, 256]);  permute_20 = None
        convert_element_type_54: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_33, torch.bfloat16);  primals_33 = None
        convert_element_type_55: "bf16[256, 256]" = torch.ops.prims.convert_element_type.default(primals_32, torch.bfloat16);  primals_32 = None
        view_30: "bf16[1024, 256]" = torch.ops.aten.view.default(view_29, [1024, 256]);  view_29 = None
        permute_21: "bf16[256, 256]" = torch.ops.aten.permute.default(convert_element_type_55, [1, 0]);  convert_element_type_55 = None
        addmm_9: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_54, view_30, permute_21);  convert_element_type_54 = view_30 = None
        view_31: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_9, [8, 128, 256]);  addmm_9 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        add_17: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_14, view_31);  add_14 = view_31 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        var_mean_5 = torch.ops.aten.var_mean.correction(add_17, [2], correction = 0, keepdim = True)
        getitem_46: "f32[8, 128, 1]" = var_mean_5[0]
        getitem_47: "f32[8, 128, 1]" = var_mean_5[1];  var_mean_5 = None
        add_18: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_46, 1e-05);  getitem_46 = None
        rsqrt_5: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_18);  add_18 = None
        sub_5: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_17, getitem_47);  getitem_47 = None
        mul_16: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_5, rsqrt_5);  sub_5 = None
        mul_17: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_16, primals_34)
        add_19: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_17, primals_35);  mul_17 = primals_35 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        convert_element_type_59: "bf16[1024]" = torch.ops.prims.convert_element_type.default(primals_37, torch.bfloat16);  primals_37 = None
        convert_element_type_60: "bf16[1024, 256]" = torch.ops.prims.convert_element_type.default(primals_36, torch.bfloat16);  primals_36 = None
        convert_element_type_61: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_19, torch.bfloat16);  add_19 = None
        view_32: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_61, [1024, 256]);  convert_element_type_61 = None
        permute_22: "bf16[256, 1024]" = torch.ops.aten.permute.default(convert_element_type_60, [1, 0]);  convert_element_type_60 = None
        addmm_10: "bf16[1024, 1024]" = torch.ops.aten.addmm.default(convert_element_type_59, view_32, permute_22);  convert_element_type_59 = None
        view_33: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_10, [8, 128, 1024])
        convert_element_type_65: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_33, torch.float32);  view_33 = None
        mul_18: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_65, 0.5)
        mul_19: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_65, 0.7071067811865476);  convert_element_type_65 = None
        erf_2: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_19);  mul_19 = None
        add_20: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_2, 1);  erf_2 = None
        mul_20: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_18, add_20);  mul_18 = add_20 = None
        convert_element_type_66: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_20, torch.bfloat16);  mul_20 = None
        convert_element_type_67: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_39, torch.bfloat16);  primals_39 = None
        convert_element_type_68: "bf16[256, 1024]" = torch.ops.prims.convert_element_type.default(primals_38, torch.bfloat16);  primals_38 = None
        view_34: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_66, [1024, 1024]);  convert_element_type_66 = None
        permute_23: "bf16[1024, 256]" = torch.ops.aten.permute.default(convert_element_type_68, [1, 0]);  convert_element_type_68 = None
        addmm_11: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_67, view_34, permute_23);  convert_element_type_67 = None
        view_35: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_11, [8, 128, 256]);  addmm_11 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        add_21: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_17, view_35);  add_17 = view_35 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        var_mean_6 = torch.ops.aten.var_mean.correction(add_21, [2], correction = 0, keepdim = True)
        getitem_48: "f32[8, 128, 1]" = var_mean_6[0]
        getitem_49: "f32[8, 128, 1]" = var_mean_6[1];  var_mean_6 = None
        add_22: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_48, 1e-05);  getitem_48 = None
        rsqrt_6: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_22);  add_22 = None
        sub_6: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_21, getitem_49);  getitem_49 = None
        mul_21: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_6, rsqrt_6);  sub_6 = None
        mul_22: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_21, primals_40)
        add_23: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_22, primals_41);  mul_22 = primals_41 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        convert_element_type_72: "bf16[768]" = torch.ops.prims.convert_element_type.default(primals_43, torch.bfloat16);  primals_43 = None
        convert_element_type_73: "bf16[768, 256]" = torch.ops.prims.convert_element_type.default(primals_42, torch.bfloat16);  primals_42 = None
        convert_element_type_74: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_23, torch.bfloat16);  add_23 = None
        view_36: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_74, [1024, 256]);  convert_element_type_74 = None
        permute_24: "bf16[256, 768]" = torch.ops.aten.permute.default(convert_element_type_73, [1, 0]);  convert_element_type_73 = None
        addmm_12: "bf16[1024, 768]" = torch.ops.aten.addmm.default(convert_element_type_72, view_36, permute_24);  convert_element_type_72 = None
        view_37: "bf16[8, 128, 768]" = torch.ops.aten.view.default(addmm_12, [8, 128, 768]);  addmm_12 = None
        split_3 = torch.ops.aten.split.Tensor(view_37, 256, 2);  view_37 = None
        getitem_50: "bf16[8, 128, 256]" = split_3[0]
        getitem_51: "bf16[8, 128, 256]" = split_3[1]
        getitem_52: "bf16[8, 128, 256]" = split_3[2];  split_3 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        view_38: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_50, [8, 128, 4, 64]);  getitem_50 = None
        permute_25: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_38, [0, 2, 1, 3]);  view_38 = None
        view_39: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_51, [8, 128, 4, 64]);  getitem_51 = None
        permute_26: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_39, [0, 2, 1, 3]);  view_39 = None
        view_40: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(getitem_52, [8, 128, 4, 64]);  getitem_52 = None
        permute_27: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_40, [0, 2, 1, 3]);  view_40 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_3 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(permute_25, permute_26, permute_27, None, True, 0.0, True)
        getitem_53: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_3[0]
        getitem_54: "f32[8, 4, 128, 1]" = _scaled_dot_product_cudnn_attention_3[1]
        getitem_59: "i64[]" = _scaled_dot_product_cudnn_attention_3[6]
        getitem_60: "i64[]" = _scaled_dot_product_cudnn_attention_3[7];  _scaled_dot_product_cudnn_attention_3 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_28: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_53, [0, 2, 1, 3])
        view_41: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_28, [8, 128, 256]);  permute_28 = None
        convert_element_type_78: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_45, torch.bfloat16);  primals_45 = None
        convert_element_type_79: "bf16[256, 256]" = torch.ops.prims.convert_element_type.default(primals_44, torch.bfloat16);  primals_44 = None
        view_42: "bf16[1024, 256]" = torch.ops.aten.view.default(view_41, [1024, 256]);  view_41 = None
        permute_29: "bf16[256, 256]" = torch.ops.aten.permute.default(convert_element_type_79, [1, 0]);  convert_element_type_79 = None
        addmm_13: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_78, view_42, permute_29);  convert_element_type_78 = view_42 = None
        view_43: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_13, [8, 128, 256]);  addmm_13 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        add_24: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_21, view_43);  add_21 = view_43 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        var_mean_7 = torch.ops.aten.var_mean.correction(add_24, [2], correction = 0, keepdim = True)
        getitem_62: "f32[8, 128, 1]" = var_mean_7[0]
        getitem_63: "f32[8, 128, 1]" = var_mean_7[1];  var_mean_7 = None
        add_25: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_62, 1e-05);  getitem_62 = None
        rsqrt_7: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_25);  add_25 = None
        sub_7: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_24, getitem_63);  getitem_63 = None
        mul_23: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_7, rsqrt_7);  sub_7 = None
        mul_24: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_23, primals_46)
        add_26: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_24, primals_47);  mul_24 = primals_47 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        convert_element_type_83: "bf16[1024]" = torch.ops.prims.convert_element_type.default(primals_49, torch.bfloat16);  primals_49 = None
        convert_element_type_84: "bf16[1024, 256]" = torch.ops.prims.convert_element_type.default(primals_48, torch.bfloat16);  primals_48 = None
        convert_element_type_85: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_26, torch.bfloat16);  add_26 = None
        view_44: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_85, [1024, 256]);  convert_element_type_85 = None
        permute_30: "bf16[256, 1024]" = torch.ops.aten.permute.default(convert_element_type_84, [1, 0]);  convert_element_type_84 = None
        addmm_14: "bf16[1024, 1024]" = torch.ops.aten.addmm.default(convert_element_type_83, view_44, permute_30);  convert_element_type_83 = None
        view_45: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_14, [8, 128, 1024])
        convert_element_type_89: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_45, torch.float32);  view_45 = None
        mul_25: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_89, 0.5)
        mul_26: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_89, 0.7071067811865476);  convert_element_type_89 = None
        erf_3: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_26);  mul_26 = None
        add_27: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_3, 1);  erf_3 = None
        mul_27: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_25, add_27);  mul_25 = add_27 = None
        convert_element_type_90: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_27, torch.bfloat16);  mul_27 = None
        convert_element_type_91: "bf16[256]" = torch.ops.prims.convert_element_type.default(primals_51, torch.bfloat16);  primals_51 = None
        convert_element_type_92: "bf16[256, 1024]" = torch.ops.prims.convert_element_type.default(primals_50, torch.bfloat16);  primals_50 = None
        view_46: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_90, [1024, 1024]);  convert_element_type_90 = None
        permute_31: "bf16[1024, 256]" = torch.ops.aten.permute.default(convert_element_type_92, [1, 0]);  convert_element_type_92 = None
        addmm_15: "bf16[1024, 256]" = torch.ops.aten.addmm.default(convert_element_type_91, view_46, permute_31);  convert_element_type_91 = None
        view_47: "bf16[8, 128, 256]" = torch.ops.aten.view.default(addmm_15, [8, 128, 256]);  addmm_15 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        add_28: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_24, view_47);  add_24 = view_47 = None

        # File: /work/main/scripts/gpu/record_attribution.py:87 in forward, code: return self.head(self.ln(x))
        var_mean_8 = torch.ops.aten.var_mean.correction(add_28, [2], correction = 0, keepdim = True)
        getitem_64: "f32[8, 128, 1]" = var_mean_8[0]
        getitem_65: "f32[8, 128, 1]" = var_mean_8[1];  var_mean_8 = None
        add_29: "f32[8, 128, 1]" = torch.ops.aten.add.Tensor(getitem_64, 1e-05);  getitem_64 = None
        rsqrt_8: "f32[8, 128, 1]" = torch.ops.aten.rsqrt.default(add_29);  add_29 = None
        sub_8: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add_28, getitem_65);  add_28 = getitem_65 = None
        mul_28: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub_8, rsqrt_8);  sub_8 = None
        mul_29: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_28, primals_52)
        add_30: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_29, primals_53);  mul_29 = primals_53 = None
        convert_element_type_96: "bf16[1024, 256]" = torch.ops.prims.convert_element_type.default(primals_54, torch.bfloat16);  primals_54 = None
        convert_element_type_97: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_30, torch.bfloat16);  add_30 = None
        permute_32: "bf16[256, 1024]" = torch.ops.aten.permute.default(convert_element_type_96, [1, 0]);  convert_element_type_96 = None
        view_48: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_97, [1024, 256]);  convert_element_type_97 = None
        mm: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_48, permute_32)
        view_49: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(mm, [8, 128, 1024]);  mm = None
        permute_35: "bf16[1024, 256]" = torch.ops.aten.permute.default(permute_32, [1, 0]);  permute_32 = None
        div: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_8, 256);  rsqrt_8 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        permute_37: "bf16[256, 1024]" = torch.ops.aten.permute.default(permute_31, [1, 0]);  permute_31 = None
        permute_41: "bf16[1024, 256]" = torch.ops.aten.permute.default(permute_30, [1, 0]);  permute_30 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        div_1: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_7, 256);  rsqrt_7 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_45: "bf16[256, 256]" = torch.ops.aten.permute.default(permute_29, [1, 0]);  permute_29 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        permute_53: "bf16[768, 256]" = torch.ops.aten.permute.default(permute_24, [1, 0]);  permute_24 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        div_2: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_6, 256);  rsqrt_6 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        permute_57: "bf16[256, 1024]" = torch.ops.aten.permute.default(permute_23, [1, 0]);  permute_23 = None
        permute_61: "bf16[1024, 256]" = torch.ops.aten.permute.default(permute_22, [1, 0]);  permute_22 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        div_3: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_5, 256);  rsqrt_5 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_65: "bf16[256, 256]" = torch.ops.aten.permute.default(permute_21, [1, 0]);  permute_21 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        permute_73: "bf16[768, 256]" = torch.ops.aten.permute.default(permute_16, [1, 0]);  permute_16 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        div_4: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_4, 256);  rsqrt_4 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        permute_77: "bf16[256, 1024]" = torch.ops.aten.permute.default(permute_15, [1, 0]);  permute_15 = None
        permute_81: "bf16[1024, 256]" = torch.ops.aten.permute.default(permute_14, [1, 0]);  permute_14 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        div_5: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_3, 256);  rsqrt_3 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_85: "bf16[256, 256]" = torch.ops.aten.permute.default(permute_13, [1, 0]);  permute_13 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        permute_93: "bf16[768, 256]" = torch.ops.aten.permute.default(permute_8, [1, 0]);  permute_8 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        div_6: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_2, 256);  rsqrt_2 = None

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        permute_97: "bf16[256, 1024]" = torch.ops.aten.permute.default(permute_7, [1, 0]);  permute_7 = None
        permute_101: "bf16[1024, 256]" = torch.ops.aten.permute.default(permute_6, [1, 0]);  permute_6 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        div_7: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt_1, 256);  rsqrt_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        permute_105: "bf16[256, 256]" = torch.ops.aten.permute.default(permute_5, [1, 0]);  permute_5 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        permute_113: "bf16[768, 256]" = torch.ops.aten.permute.default(permute, [1, 0]);  permute = None
        return (view_49, primals_2, primals_4, primals_10, primals_16, primals_22, primals_28, primals_34, primals_40, primals_46, primals_52, embedding, iota, embedding_1, getitem_1, rsqrt, view, permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, mul_2, view_8, addmm_2, view_10, mul_7, view_12, permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, mul_9, view_20, addmm_6, view_22, mul_14, view_24, permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, mul_16, view_32, addmm_10, view_34, mul_21, view_36, permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, mul_23, view_44, addmm_14, view_46, mul_28, view_48, permute_35, div, permute_37, permute_41, div_1, permute_45, permute_53, div_2, permute_57, permute_61, div_3, permute_65, permute_73, div_4, permute_77, permute_81, div_5, permute_85, permute_93, div_6, permute_97, permute_101, div_7, permute_105, permute_113)
