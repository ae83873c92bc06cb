class GraphModule(torch.nn.Module):
    def forward(self, primals_2: "i64[8, 128]", primals_4: "f32[256]", primals_10: "f32[256]", primals_16: "f32[256]", primals_22: "f32[256]", primals_28: "f32[256]", primals_34: "f32[256]", primals_40: "f32[256]", primals_46: "f32[256]", primals_52: "f32[256]", embedding: "f32[8, 128, 256]", iota: "i64[128]", embedding_1: "f32[128, 256]", getitem_1: "f32[8, 128, 1]", rsqrt: "f32[8, 128, 1]", view: "bf16[1024, 256]", permute_1: "bf16[8, 4, 128, 64]", permute_2: "bf16[8, 4, 128, 64]", permute_3: "bf16[8, 4, 128, 64]", getitem_5: "bf16[8, 4, 128, 64]", getitem_6: "f32[8, 4, 128, 1]", getitem_11: "i64[]", getitem_12: "i64[]", mul_2: "f32[8, 128, 256]", view_8: "bf16[1024, 256]", addmm_2: "bf16[1024, 1024]", view_10: "bf16[1024, 1024]", mul_7: "f32[8, 128, 256]", view_12: "bf16[1024, 256]", permute_9: "bf16[8, 4, 128, 64]", permute_10: "bf16[8, 4, 128, 64]", permute_11: "bf16[8, 4, 128, 64]", getitem_21: "bf16[8, 4, 128, 64]", getitem_22: "f32[8, 4, 128, 1]", getitem_27: "i64[]", getitem_28: "i64[]", mul_9: "f32[8, 128, 256]", view_20: "bf16[1024, 256]", addmm_6: "bf16[1024, 1024]", view_22: "bf16[1024, 1024]", mul_14: "f32[8, 128, 256]", view_24: "bf16[1024, 256]", permute_17: "bf16[8, 4, 128, 64]", permute_18: "bf16[8, 4, 128, 64]", permute_19: "bf16[8, 4, 128, 64]", getitem_37: "bf16[8, 4, 128, 64]", getitem_38: "f32[8, 4, 128, 1]", getitem_43: "i64[]", getitem_44: "i64[]", mul_16: "f32[8, 128, 256]", view_32: "bf16[1024, 256]", addmm_10: "bf16[1024, 1024]", view_34: "bf16[1024, 1024]", mul_21: "f32[8, 128, 256]", view_36: "bf16[1024, 256]", permute_25: "bf16[8, 4, 128, 64]", permute_26: "bf16[8, 4, 128, 64]", permute_27: "bf16[8, 4, 128, 64]", getitem_53: "bf16[8, 4, 128, 64]", getitem_54: "f32[8, 4, 128, 1]", getitem_59: "i64[]", getitem_60: "i64[]", mul_23: "f32[8, 128, 256]", view_44: "bf16[1024, 256]", addmm_14: "bf16[1024, 1024]", view_46: "bf16[1024, 1024]", mul_28: "f32[8, 128, 256]", view_48: "bf16[1024, 256]", permute_35: "bf16[1024, 256]", div: "f32[8, 128, 1]", permute_37: "bf16[256, 1024]", permute_41: "bf16[1024, 256]", div_1: "f32[8, 128, 1]", permute_45: "bf16[256, 256]", permute_53: "bf16[768, 256]", div_2: "f32[8, 128, 1]", permute_57: "bf16[256, 1024]", permute_61: "bf16[1024, 256]", div_3: "f32[8, 128, 1]", permute_65: "bf16[256, 256]", permute_73: "bf16[768, 256]", div_4: "f32[8, 128, 1]", permute_77: "bf16[256, 1024]", permute_81: "bf16[1024, 256]", div_5: "f32[8, 128, 1]", permute_85: "bf16[256, 256]", permute_93: "bf16[768, 256]", div_6: "f32[8, 128, 1]", permute_97: "bf16[256, 1024]", permute_101: "bf16[1024, 256]", div_7: "f32[8, 128, 1]", permute_105: "bf16[256, 256]", permute_113: "bf16[768, 256]", tangents_1: "bf16[8, 128, 1024]"):
        # File: /work/main/scripts/gpu/record_attribution.py:87 in forward, code: return self.head(self.ln(x))
        view_50: "bf16[1024, 1024]" = torch.ops.aten.view.default(tangents_1, [1024, 1024]);  tangents_1 = None
        permute_33: "bf16[1024, 1024]" = torch.ops.aten.permute.default(view_50, [1, 0])
        mm_1: "bf16[1024, 256]" = torch.ops.aten.mm.default(permute_33, view_48);  permute_33 = view_48 = None
        mm_2: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_50, permute_35);  view_50 = permute_35 = None
        view_51: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_2, [8, 128, 256]);  mm_2 = None
        convert_element_type_104: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_51, torch.float32);  view_51 = None
        convert_element_type_105: "f32[1024, 256]" = torch.ops.prims.convert_element_type.default(mm_1, torch.float32);  mm_1 = None
        mul_31: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_104, primals_52);  primals_52 = None
        mul_32: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_31, 256)
        sum_1: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_31, [2], True)
        mul_33: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_31, mul_28);  mul_31 = None
        sum_2: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_33, [2], True);  mul_33 = None
        mul_34: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_28, sum_2);  sum_2 = None
        sub_10: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_32, sum_1);  mul_32 = sum_1 = None
        sub_11: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_10, mul_34);  sub_10 = mul_34 = None
        mul_35: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div, sub_11);  div = sub_11 = None
        mul_36: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_104, mul_28);  mul_28 = None
        sum_3: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_36, [0, 1]);  mul_36 = None
        sum_4: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_104, [0, 1]);  convert_element_type_104 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        convert_element_type_106: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(mul_35, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        view_52: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_106, [1024, 256]);  convert_element_type_106 = None
        mm_3: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_52, permute_37);  permute_37 = None
        permute_38: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_52, [1, 0])
        mm_4: "bf16[256, 1024]" = torch.ops.aten.mm.default(permute_38, view_46);  permute_38 = view_46 = None
        sum_5: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_52, [0], True, dtype = torch.float32);  view_52 = None
        view_53: "f32[256]" = torch.ops.aten.view.default(sum_5, [256]);  sum_5 = None
        view_54: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(mm_3, [8, 128, 1024]);  mm_3 = None
        convert_element_type_112: "f32[256, 1024]" = torch.ops.prims.convert_element_type.default(mm_4, torch.float32);  mm_4 = None
        convert_element_type_default_15: "f32[256]" = torch.ops.prims.convert_element_type.default(view_53, torch.float32);  view_53 = None
        convert_element_type_114: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_54, torch.float32);  view_54 = None
        view_45: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_14, [8, 128, 1024]);  addmm_14 = None
        convert_element_type_89: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_45, torch.float32);  view_45 = None
        mul_26: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_89, 0.7071067811865476)
        erf_3: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_26);  mul_26 = None
        add_27: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_3, 1);  erf_3 = None
        mul_38: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(add_27, 0.5);  add_27 = None
        mul_39: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_89, convert_element_type_89)
        mul_40: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_39, -0.5);  mul_39 = None
        exp: "f32[8, 128, 1024]" = torch.ops.aten.exp.default(mul_40);  mul_40 = None
        mul_41: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(exp, 0.3989422804014327);  exp = None
        mul_42: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_89, mul_41);  convert_element_type_89 = mul_41 = None
        add_32: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(mul_38, mul_42);  mul_38 = mul_42 = None
        mul_43: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_114, add_32);  convert_element_type_114 = add_32 = None
        convert_element_type_116: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_43, torch.bfloat16);  mul_43 = None
        view_55: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_116, [1024, 1024]);  convert_element_type_116 = None
        mm_5: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_55, permute_41);  permute_41 = None
        permute_42: "bf16[1024, 1024]" = torch.ops.aten.permute.default(view_55, [1, 0])
        mm_6: "bf16[1024, 256]" = torch.ops.aten.mm.default(permute_42, view_44);  permute_42 = view_44 = None
        sum_6: "f32[1, 1024]" = torch.ops.aten.sum.dim_IntList(view_55, [0], True, dtype = torch.float32);  view_55 = None
        view_56: "f32[1024]" = torch.ops.aten.view.default(sum_6, [1024]);  sum_6 = None
        view_57: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_5, [8, 128, 256]);  mm_5 = None
        convert_element_type_122: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_57, torch.float32);  view_57 = None
        convert_element_type_123: "f32[1024, 256]" = torch.ops.prims.convert_element_type.default(mm_6, torch.float32);  mm_6 = None
        convert_element_type_default_14: "f32[1024]" = torch.ops.prims.convert_element_type.default(view_56, torch.float32);  view_56 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        mul_45: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_122, primals_46);  primals_46 = None
        mul_46: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_45, 256)
        sum_7: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_45, [2], True)
        mul_47: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_45, mul_23);  mul_45 = None
        sum_8: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_47, [2], True);  mul_47 = None
        mul_48: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_23, sum_8);  sum_8 = None
        sub_13: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_46, sum_7);  mul_46 = sum_7 = None
        sub_14: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_13, mul_48);  sub_13 = mul_48 = None
        mul_49: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_1, sub_14);  div_1 = sub_14 = None
        mul_50: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_122, mul_23);  mul_23 = None
        sum_9: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_50, [0, 1]);  mul_50 = None
        sum_10: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_122, [0, 1]);  convert_element_type_122 = None
        add_33: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(mul_35, mul_49);  mul_35 = mul_49 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        convert_element_type_125: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_33, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        view_58: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_125, [1024, 256]);  convert_element_type_125 = None
        mm_7: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_58, permute_45);  permute_45 = None
        permute_46: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_58, [1, 0])
        permute_28: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_53, [0, 2, 1, 3])
        view_41: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_28, [8, 128, 256]);  permute_28 = None
        view_42: "bf16[1024, 256]" = torch.ops.aten.view.default(view_41, [1024, 256]);  view_41 = None
        mm_8: "bf16[256, 256]" = torch.ops.aten.mm.default(permute_46, view_42);  permute_46 = view_42 = None
        sum_11: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_58, [0], True, dtype = torch.float32);  view_58 = None
        view_59: "f32[256]" = torch.ops.aten.view.default(sum_11, [256]);  sum_11 = None
        view_60: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_7, [8, 128, 256]);  mm_7 = None
        convert_element_type_131: "f32[256, 256]" = torch.ops.prims.convert_element_type.default(mm_8, torch.float32);  mm_8 = None
        convert_element_type_default_13: "f32[256]" = torch.ops.prims.convert_element_type.default(view_59, torch.float32);  view_59 = None
        view_61: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(view_60, [8, 128, 4, 64]);  view_60 = None
        permute_49: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_61, [0, 2, 1, 3]);  view_61 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_backward = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(permute_49, permute_25, permute_26, permute_27, getitem_53, getitem_54, getitem_59, getitem_60, None, None, None, 128, 128, 0.0, True);  permute_49 = permute_25 = permute_26 = permute_27 = getitem_53 = getitem_54 = getitem_59 = getitem_60 = None
        getitem_66: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward[0]
        getitem_67: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward[1]
        getitem_68: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward[2];  _scaled_dot_product_cudnn_attention_backward = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        permute_50: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_68, [0, 2, 1, 3]);  getitem_68 = None
        view_62: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_50, [8, 128, 256]);  permute_50 = None
        permute_51: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_67, [0, 2, 1, 3]);  getitem_67 = None
        view_63: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_51, [8, 128, 256]);  permute_51 = None
        permute_52: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_66, [0, 2, 1, 3]);  getitem_66 = None
        view_64: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_52, [8, 128, 256]);  permute_52 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        cat: "bf16[8, 128, 768]" = torch.ops.aten.cat.default([view_64, view_63, view_62], 2);  view_64 = view_63 = view_62 = None
        view_65: "bf16[1024, 768]" = torch.ops.aten.view.default(cat, [1024, 768]);  cat = None
        mm_9: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_65, permute_53);  permute_53 = None
        permute_54: "bf16[768, 1024]" = torch.ops.aten.permute.default(view_65, [1, 0])
        mm_10: "bf16[768, 256]" = torch.ops.aten.mm.default(permute_54, view_36);  permute_54 = view_36 = None
        sum_12: "f32[1, 768]" = torch.ops.aten.sum.dim_IntList(view_65, [0], True, dtype = torch.float32);  view_65 = None
        view_66: "f32[768]" = torch.ops.aten.view.default(sum_12, [768]);  sum_12 = None
        view_67: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_9, [8, 128, 256]);  mm_9 = None
        convert_element_type_138: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_67, torch.float32);  view_67 = None
        convert_element_type_139: "f32[768, 256]" = torch.ops.prims.convert_element_type.default(mm_10, torch.float32);  mm_10 = None
        convert_element_type_default_12: "f32[768]" = torch.ops.prims.convert_element_type.default(view_66, torch.float32);  view_66 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        mul_52: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_138, primals_40);  primals_40 = None
        mul_53: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_52, 256)
        sum_13: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_52, [2], True)
        mul_54: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_52, mul_21);  mul_52 = None
        sum_14: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_54, [2], True);  mul_54 = None
        mul_55: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_21, sum_14);  sum_14 = None
        sub_16: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_53, sum_13);  mul_53 = sum_13 = None
        sub_17: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_16, mul_55);  sub_16 = mul_55 = None
        mul_56: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_2, sub_17);  div_2 = sub_17 = None
        mul_57: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_138, mul_21);  mul_21 = None
        sum_15: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_57, [0, 1]);  mul_57 = None
        sum_16: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_138, [0, 1]);  convert_element_type_138 = None
        add_34: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_33, mul_56);  add_33 = mul_56 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        convert_element_type_141: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_34, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        view_68: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_141, [1024, 256]);  convert_element_type_141 = None
        mm_11: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_68, permute_57);  permute_57 = None
        permute_58: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_68, [1, 0])
        mm_12: "bf16[256, 1024]" = torch.ops.aten.mm.default(permute_58, view_34);  permute_58 = view_34 = None
        sum_17: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_68, [0], True, dtype = torch.float32);  view_68 = None
        view_69: "f32[256]" = torch.ops.aten.view.default(sum_17, [256]);  sum_17 = None
        view_70: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(mm_11, [8, 128, 1024]);  mm_11 = None
        convert_element_type_147: "f32[256, 1024]" = torch.ops.prims.convert_element_type.default(mm_12, torch.float32);  mm_12 = None
        convert_element_type_default_11: "f32[256]" = torch.ops.prims.convert_element_type.default(view_69, torch.float32);  view_69 = None
        convert_element_type_149: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_70, torch.float32);  view_70 = None
        view_33: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_10, [8, 128, 1024]);  addmm_10 = None
        convert_element_type_65: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_33, torch.float32);  view_33 = None
        mul_19: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_65, 0.7071067811865476)
        erf_2: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_19);  mul_19 = None
        add_20: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_2, 1);  erf_2 = None
        mul_59: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(add_20, 0.5);  add_20 = None
        mul_60: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_65, convert_element_type_65)
        mul_61: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_60, -0.5);  mul_60 = None
        exp_1: "f32[8, 128, 1024]" = torch.ops.aten.exp.default(mul_61);  mul_61 = None
        mul_62: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(exp_1, 0.3989422804014327);  exp_1 = None
        mul_63: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_65, mul_62);  convert_element_type_65 = mul_62 = None
        add_36: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(mul_59, mul_63);  mul_59 = mul_63 = None
        mul_64: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_149, add_36);  convert_element_type_149 = add_36 = None
        convert_element_type_151: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_64, torch.bfloat16);  mul_64 = None
        view_71: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_151, [1024, 1024]);  convert_element_type_151 = None
        mm_13: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_71, permute_61);  permute_61 = None
        permute_62: "bf16[1024, 1024]" = torch.ops.aten.permute.default(view_71, [1, 0])
        mm_14: "bf16[1024, 256]" = torch.ops.aten.mm.default(permute_62, view_32);  permute_62 = view_32 = None
        sum_18: "f32[1, 1024]" = torch.ops.aten.sum.dim_IntList(view_71, [0], True, dtype = torch.float32);  view_71 = None
        view_72: "f32[1024]" = torch.ops.aten.view.default(sum_18, [1024]);  sum_18 = None
        view_73: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_13, [8, 128, 256]);  mm_13 = None
        convert_element_type_157: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_73, torch.float32);  view_73 = None
        convert_element_type_158: "f32[1024, 256]" = torch.ops.prims.convert_element_type.default(mm_14, torch.float32);  mm_14 = None
        convert_element_type_default_10: "f32[1024]" = torch.ops.prims.convert_element_type.default(view_72, torch.float32);  view_72 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        mul_66: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_157, primals_34);  primals_34 = None
        mul_67: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_66, 256)
        sum_19: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_66, [2], True)
        mul_68: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_66, mul_16);  mul_66 = None
        sum_20: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_68, [2], True);  mul_68 = None
        mul_69: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_16, sum_20);  sum_20 = None
        sub_19: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_67, sum_19);  mul_67 = sum_19 = None
        sub_20: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_19, mul_69);  sub_19 = mul_69 = None
        mul_70: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_3, sub_20);  div_3 = sub_20 = None
        mul_71: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_157, mul_16);  mul_16 = None
        sum_21: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_71, [0, 1]);  mul_71 = None
        sum_22: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_157, [0, 1]);  convert_element_type_157 = None
        add_37: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_34, mul_70);  add_34 = mul_70 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        convert_element_type_160: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_37, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        view_74: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_160, [1024, 256]);  convert_element_type_160 = None
        mm_15: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_74, permute_65);  permute_65 = None
        permute_66: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_74, [1, 0])
        permute_20: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_37, [0, 2, 1, 3])
        view_29: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_20, [8, 128, 256]);  permute_20 = None
        view_30: "bf16[1024, 256]" = torch.ops.aten.view.default(view_29, [1024, 256]);  view_29 = None
        mm_16: "bf16[256, 256]" = torch.ops.aten.mm.default(permute_66, view_30);  permute_66 = view_30 = None
        sum_23: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_74, [0], True, dtype = torch.float32);  view_74 = None
        view_75: "f32[256]" = torch.ops.aten.view.default(sum_23, [256]);  sum_23 = None
        view_76: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_15, [8, 128, 256]);  mm_15 = None
        convert_element_type_166: "f32[256, 256]" = torch.ops.prims.convert_element_type.default(mm_16, torch.float32);  mm_16 = None
        convert_element_type_default_9: "f32[256]" = torch.ops.prims.convert_element_type.default(view_75, torch.float32);  view_75 = None
        view_77: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(view_76, [8, 128, 4, 64]);  view_76 = None
        permute_69: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_77, [0, 2, 1, 3]);  view_77 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_backward_1 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(permute_69, permute_17, permute_18, permute_19, getitem_37, getitem_38, getitem_43, getitem_44, None, None, None, 128, 128, 0.0, True);  permute_69 = permute_17 = permute_18 = permute_19 = getitem_37 = getitem_38 = getitem_43 = getitem_44 = None
        getitem_69: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_1[0]
        getitem_70: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_1[1]
        getitem_71: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_1[2];  _scaled_dot_product_cudnn_attention_backward_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        permute_70: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_71, [0, 2, 1, 3]);  getitem_71 = None
        view_78: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_70, [8, 128, 256]);  permute_70 = None
        permute_71: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_70, [0, 2, 1, 3]);  getitem_70 = None
        view_79: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_71, [8, 128, 256]);  permute_71 = None
        permute_72: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_69, [0, 2, 1, 3]);  getitem_69 = None
        view_80: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_72, [8, 128, 256]);  permute_72 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        cat_1: "bf16[8, 128, 768]" = torch.ops.aten.cat.default([view_80, view_79, view_78], 2);  view_80 = view_79 = view_78 = None
        view_81: "bf16[1024, 768]" = torch.ops.aten.view.default(cat_1, [1024, 768]);  cat_1 = None
        mm_17: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_81, permute_73);  permute_73 = None
        permute_74: "bf16[768, 1024]" = torch.ops.aten.permute.default(view_81, [1, 0])
        mm_18: "bf16[768, 256]" = torch.ops.aten.mm.default(permute_74, view_24);  permute_74 = view_24 = None
        sum_24: "f32[1, 768]" = torch.ops.aten.sum.dim_IntList(view_81, [0], True, dtype = torch.float32);  view_81 = None
        view_82: "f32[768]" = torch.ops.aten.view.default(sum_24, [768]);  sum_24 = None
        view_83: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_17, [8, 128, 256]);  mm_17 = None
        convert_element_type_173: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_83, torch.float32);  view_83 = None
        convert_element_type_174: "f32[768, 256]" = torch.ops.prims.convert_element_type.default(mm_18, torch.float32);  mm_18 = None
        convert_element_type_default_8: "f32[768]" = torch.ops.prims.convert_element_type.default(view_82, torch.float32);  view_82 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        mul_73: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_173, primals_28);  primals_28 = None
        mul_74: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_73, 256)
        sum_25: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_73, [2], True)
        mul_75: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_73, mul_14);  mul_73 = None
        sum_26: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_75, [2], True);  mul_75 = None
        mul_76: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_14, sum_26);  sum_26 = None
        sub_22: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_74, sum_25);  mul_74 = sum_25 = None
        sub_23: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_22, mul_76);  sub_22 = mul_76 = None
        mul_77: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_4, sub_23);  div_4 = sub_23 = None
        mul_78: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_173, mul_14);  mul_14 = None
        sum_27: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_78, [0, 1]);  mul_78 = None
        sum_28: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_173, [0, 1]);  convert_element_type_173 = None
        add_38: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_37, mul_77);  add_37 = mul_77 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        convert_element_type_176: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_38, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        view_84: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_176, [1024, 256]);  convert_element_type_176 = None
        mm_19: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_84, permute_77);  permute_77 = None
        permute_78: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_84, [1, 0])
        mm_20: "bf16[256, 1024]" = torch.ops.aten.mm.default(permute_78, view_22);  permute_78 = view_22 = None
        sum_29: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_84, [0], True, dtype = torch.float32);  view_84 = None
        view_85: "f32[256]" = torch.ops.aten.view.default(sum_29, [256]);  sum_29 = None
        view_86: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(mm_19, [8, 128, 1024]);  mm_19 = None
        convert_element_type_182: "f32[256, 1024]" = torch.ops.prims.convert_element_type.default(mm_20, torch.float32);  mm_20 = None
        convert_element_type_default_7: "f32[256]" = torch.ops.prims.convert_element_type.default(view_85, torch.float32);  view_85 = None
        convert_element_type_184: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_86, torch.float32);  view_86 = None
        view_21: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_6, [8, 128, 1024]);  addmm_6 = None
        convert_element_type_41: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_21, torch.float32);  view_21 = None
        mul_12: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_41, 0.7071067811865476)
        erf_1: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_12);  mul_12 = None
        add_13: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_80: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(add_13, 0.5);  add_13 = None
        mul_81: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_41, convert_element_type_41)
        mul_82: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_81, -0.5);  mul_81 = None
        exp_2: "f32[8, 128, 1024]" = torch.ops.aten.exp.default(mul_82);  mul_82 = None
        mul_83: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(exp_2, 0.3989422804014327);  exp_2 = None
        mul_84: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_41, mul_83);  convert_element_type_41 = mul_83 = None
        add_40: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(mul_80, mul_84);  mul_80 = mul_84 = None
        mul_85: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_184, add_40);  convert_element_type_184 = add_40 = None
        convert_element_type_186: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_85, torch.bfloat16);  mul_85 = None
        view_87: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_186, [1024, 1024]);  convert_element_type_186 = None
        mm_21: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_87, permute_81);  permute_81 = None
        permute_82: "bf16[1024, 1024]" = torch.ops.aten.permute.default(view_87, [1, 0])
        mm_22: "bf16[1024, 256]" = torch.ops.aten.mm.default(permute_82, view_20);  permute_82 = view_20 = None
        sum_30: "f32[1, 1024]" = torch.ops.aten.sum.dim_IntList(view_87, [0], True, dtype = torch.float32);  view_87 = None
        view_88: "f32[1024]" = torch.ops.aten.view.default(sum_30, [1024]);  sum_30 = None
        view_89: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_21, [8, 128, 256]);  mm_21 = None
        convert_element_type_192: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_89, torch.float32);  view_89 = None
        convert_element_type_193: "f32[1024, 256]" = torch.ops.prims.convert_element_type.default(mm_22, torch.float32);  mm_22 = None
        convert_element_type_default_6: "f32[1024]" = torch.ops.prims.convert_element_type.default(view_88, torch.float32);  view_88 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        mul_87: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_192, primals_22);  primals_22 = None
        mul_88: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_87, 256)
        sum_31: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_87, [2], True)
        mul_89: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_87, mul_9);  mul_87 = None
        sum_32: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_89, [2], True);  mul_89 = None
        mul_90: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_9, sum_32);  sum_32 = None
        sub_25: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_88, sum_31);  mul_88 = sum_31 = None
        sub_26: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_25, mul_90);  sub_25 = mul_90 = None
        mul_91: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_5, sub_26);  div_5 = sub_26 = None
        mul_92: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_192, mul_9);  mul_9 = None
        sum_33: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_92, [0, 1]);  mul_92 = None
        sum_34: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_192, [0, 1]);  convert_element_type_192 = None
        add_41: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_38, mul_91);  add_38 = mul_91 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        convert_element_type_195: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_41, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        view_90: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_195, [1024, 256]);  convert_element_type_195 = None
        mm_23: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_90, permute_85);  permute_85 = None
        permute_86: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_90, [1, 0])
        permute_12: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_21, [0, 2, 1, 3])
        view_17: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_12, [8, 128, 256]);  permute_12 = None
        view_18: "bf16[1024, 256]" = torch.ops.aten.view.default(view_17, [1024, 256]);  view_17 = None
        mm_24: "bf16[256, 256]" = torch.ops.aten.mm.default(permute_86, view_18);  permute_86 = view_18 = None
        sum_35: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_90, [0], True, dtype = torch.float32);  view_90 = None
        view_91: "f32[256]" = torch.ops.aten.view.default(sum_35, [256]);  sum_35 = None
        view_92: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_23, [8, 128, 256]);  mm_23 = None
        convert_element_type_201: "f32[256, 256]" = torch.ops.prims.convert_element_type.default(mm_24, torch.float32);  mm_24 = None
        convert_element_type_default_5: "f32[256]" = torch.ops.prims.convert_element_type.default(view_91, torch.float32);  view_91 = None
        view_93: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(view_92, [8, 128, 4, 64]);  view_92 = None
        permute_89: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_93, [0, 2, 1, 3]);  view_93 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_backward_2 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(permute_89, permute_9, permute_10, permute_11, getitem_21, getitem_22, getitem_27, getitem_28, None, None, None, 128, 128, 0.0, True);  permute_89 = permute_9 = permute_10 = permute_11 = getitem_21 = getitem_22 = getitem_27 = getitem_28 = None
        getitem_72: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_2[0]
        getitem_73: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_2[1]
        getitem_74: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_2[2];  _scaled_dot_product_cudnn_attention_backward_2 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        permute_90: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_74, [0, 2, 1, 3]);  getitem_74 = None
        view_94: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_90, [8, 128, 256]);  permute_90 = None
        permute_91: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_73, [0, 2, 1, 3]);  getitem_73 = None
        view_95: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_91, [8, 128, 256]);  permute_91 = None
        permute_92: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_72, [0, 2, 1, 3]);  getitem_72 = None
        view_96: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_92, [8, 128, 256]);  permute_92 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        cat_2: "bf16[8, 128, 768]" = torch.ops.aten.cat.default([view_96, view_95, view_94], 2);  view_96 = view_95 = view_94 = None
        view_97: "bf16[1024, 768]" = torch.ops.aten.view.default(cat_2, [1024, 768]);  cat_2 = None
        mm_25: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_97, permute_93);  permute_93 = None
        permute_94: "bf16[768, 1024]" = torch.ops.aten.permute.default(view_97, [1, 0])
        mm_26: "bf16[768, 256]" = torch.ops.aten.mm.default(permute_94, view_12);  permute_94 = view_12 = None
        sum_36: "f32[1, 768]" = torch.ops.aten.sum.dim_IntList(view_97, [0], True, dtype = torch.float32);  view_97 = None
        view_98: "f32[768]" = torch.ops.aten.view.default(sum_36, [768]);  sum_36 = None
        view_99: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_25, [8, 128, 256]);  mm_25 = None
        convert_element_type_208: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_99, torch.float32);  view_99 = None
        convert_element_type_209: "f32[768, 256]" = torch.ops.prims.convert_element_type.default(mm_26, torch.float32);  mm_26 = None
        convert_element_type_default_4: "f32[768]" = torch.ops.prims.convert_element_type.default(view_98, torch.float32);  view_98 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        mul_94: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_208, primals_16);  primals_16 = None
        mul_95: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_94, 256)
        sum_37: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_94, [2], True)
        mul_96: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_94, mul_7);  mul_94 = None
        sum_38: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_96, [2], True);  mul_96 = None
        mul_97: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_7, sum_38);  sum_38 = None
        sub_28: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_95, sum_37);  mul_95 = sum_37 = None
        sub_29: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_28, mul_97);  sub_28 = mul_97 = None
        mul_98: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_6, sub_29);  div_6 = sub_29 = None
        mul_99: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_208, mul_7);  mul_7 = None
        sum_39: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_99, [0, 1]);  mul_99 = None
        sum_40: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_208, [0, 1]);  convert_element_type_208 = None
        add_42: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_41, mul_98);  add_41 = mul_98 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        convert_element_type_211: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_42, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:58 in forward, code: return self.down(F.gelu(self.up(x)))
        view_100: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_211, [1024, 256]);  convert_element_type_211 = None
        mm_27: "bf16[1024, 1024]" = torch.ops.aten.mm.default(view_100, permute_97);  permute_97 = None
        permute_98: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_100, [1, 0])
        mm_28: "bf16[256, 1024]" = torch.ops.aten.mm.default(permute_98, view_10);  permute_98 = view_10 = None
        sum_41: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_100, [0], True, dtype = torch.float32);  view_100 = None
        view_101: "f32[256]" = torch.ops.aten.view.default(sum_41, [256]);  sum_41 = None
        view_102: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(mm_27, [8, 128, 1024]);  mm_27 = None
        convert_element_type_217: "f32[256, 1024]" = torch.ops.prims.convert_element_type.default(mm_28, torch.float32);  mm_28 = None
        convert_element_type_default_3: "f32[256]" = torch.ops.prims.convert_element_type.default(view_101, torch.float32);  view_101 = None
        convert_element_type_219: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_102, torch.float32);  view_102 = None
        view_9: "bf16[8, 128, 1024]" = torch.ops.aten.view.default(addmm_2, [8, 128, 1024]);  addmm_2 = None
        convert_element_type_17: "f32[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(view_9, torch.float32);  view_9 = None
        mul_5: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_17, 0.7071067811865476)
        erf: "f32[8, 128, 1024]" = torch.ops.aten.erf.default(mul_5);  mul_5 = None
        add_6: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_101: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(add_6, 0.5);  add_6 = None
        mul_102: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_17, convert_element_type_17)
        mul_103: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(mul_102, -0.5);  mul_102 = None
        exp_3: "f32[8, 128, 1024]" = torch.ops.aten.exp.default(mul_103);  mul_103 = None
        mul_104: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(exp_3, 0.3989422804014327);  exp_3 = None
        mul_105: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_17, mul_104);  convert_element_type_17 = mul_104 = None
        add_44: "f32[8, 128, 1024]" = torch.ops.aten.add.Tensor(mul_101, mul_105);  mul_101 = mul_105 = None
        mul_106: "f32[8, 128, 1024]" = torch.ops.aten.mul.Tensor(convert_element_type_219, add_44);  convert_element_type_219 = add_44 = None
        convert_element_type_221: "bf16[8, 128, 1024]" = torch.ops.prims.convert_element_type.default(mul_106, torch.bfloat16);  mul_106 = None
        view_103: "bf16[1024, 1024]" = torch.ops.aten.view.default(convert_element_type_221, [1024, 1024]);  convert_element_type_221 = None
        mm_29: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_103, permute_101);  permute_101 = None
        permute_102: "bf16[1024, 1024]" = torch.ops.aten.permute.default(view_103, [1, 0])
        mm_30: "bf16[1024, 256]" = torch.ops.aten.mm.default(permute_102, view_8);  permute_102 = view_8 = None
        sum_42: "f32[1, 1024]" = torch.ops.aten.sum.dim_IntList(view_103, [0], True, dtype = torch.float32);  view_103 = None
        view_104: "f32[1024]" = torch.ops.aten.view.default(sum_42, [1024]);  sum_42 = None
        view_105: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_29, [8, 128, 256]);  mm_29 = None
        convert_element_type_227: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_105, torch.float32);  view_105 = None
        convert_element_type_228: "f32[1024, 256]" = torch.ops.prims.convert_element_type.default(mm_30, torch.float32);  mm_30 = None
        convert_element_type_default_2: "f32[1024]" = torch.ops.prims.convert_element_type.default(view_104, torch.float32);  view_104 = None

        # File: /work/main/scripts/gpu/record_attribution.py:71 in forward, code: return x + self.mlp(self.ln2(x))
        mul_108: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_227, primals_10);  primals_10 = None
        mul_109: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_108, 256)
        sum_43: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_108, [2], True)
        mul_110: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_108, mul_2);  mul_108 = None
        sum_44: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_110, [2], True);  mul_110 = None
        mul_111: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_2, sum_44);  sum_44 = None
        sub_31: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_109, sum_43);  mul_109 = sum_43 = None
        sub_32: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_31, mul_111);  sub_31 = mul_111 = None
        mul_112: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_7, sub_32);  div_7 = sub_32 = None
        mul_113: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_227, mul_2);  mul_2 = None
        sum_45: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_113, [0, 1]);  mul_113 = None
        sum_46: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_227, [0, 1]);  convert_element_type_227 = None
        add_45: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_42, mul_112);  add_42 = mul_112 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        convert_element_type_230: "bf16[8, 128, 256]" = torch.ops.prims.convert_element_type.default(add_45, torch.bfloat16)

        # File: /work/main/scripts/gpu/record_attribution.py:48 in forward, code: return self.proj(y.transpose(1, 2).reshape(b, t, d))
        view_106: "bf16[1024, 256]" = torch.ops.aten.view.default(convert_element_type_230, [1024, 256]);  convert_element_type_230 = None
        mm_31: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_106, permute_105);  permute_105 = None
        permute_106: "bf16[256, 1024]" = torch.ops.aten.permute.default(view_106, [1, 0])
        permute_4: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_5, [0, 2, 1, 3])
        view_5: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_4, [8, 128, 256]);  permute_4 = None
        view_6: "bf16[1024, 256]" = torch.ops.aten.view.default(view_5, [1024, 256]);  view_5 = None
        mm_32: "bf16[256, 256]" = torch.ops.aten.mm.default(permute_106, view_6);  permute_106 = view_6 = None
        sum_47: "f32[1, 256]" = torch.ops.aten.sum.dim_IntList(view_106, [0], True, dtype = torch.float32);  view_106 = None
        view_107: "f32[256]" = torch.ops.aten.view.default(sum_47, [256]);  sum_47 = None
        view_108: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_31, [8, 128, 256]);  mm_31 = None
        convert_element_type_236: "f32[256, 256]" = torch.ops.prims.convert_element_type.default(mm_32, torch.float32);  mm_32 = None
        convert_element_type_default_1: "f32[256]" = torch.ops.prims.convert_element_type.default(view_107, torch.float32);  view_107 = None
        view_109: "bf16[8, 128, 4, 64]" = torch.ops.aten.view.default(view_108, [8, 128, 4, 64]);  view_108 = None
        permute_109: "bf16[8, 4, 128, 64]" = torch.ops.aten.permute.default(view_109, [0, 2, 1, 3]);  view_109 = None

        # File: /work/main/scripts/gpu/record_attribution.py:47 in forward, code: y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        _scaled_dot_product_cudnn_attention_backward_3 = torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default(permute_109, permute_1, permute_2, permute_3, getitem_5, getitem_6, getitem_11, getitem_12, None, None, None, 128, 128, 0.0, True);  permute_109 = permute_1 = permute_2 = permute_3 = getitem_5 = getitem_6 = getitem_11 = getitem_12 = None
        getitem_75: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_3[0]
        getitem_76: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_3[1]
        getitem_77: "bf16[8, 4, 128, 64]" = _scaled_dot_product_cudnn_attention_backward_3[2];  _scaled_dot_product_cudnn_attention_backward_3 = None

        # File: /work/main/scripts/gpu/record_attribution.py:46 in <genexpr>, code: q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        permute_110: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_77, [0, 2, 1, 3]);  getitem_77 = None
        view_110: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_110, [8, 128, 256]);  permute_110 = None
        permute_111: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_76, [0, 2, 1, 3]);  getitem_76 = None
        view_111: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_111, [8, 128, 256]);  permute_111 = None
        permute_112: "bf16[8, 128, 4, 64]" = torch.ops.aten.permute.default(getitem_75, [0, 2, 1, 3]);  getitem_75 = None
        view_112: "bf16[8, 128, 256]" = torch.ops.aten.view.default(permute_112, [8, 128, 256]);  permute_112 = None

        # File: /work/main/scripts/gpu/record_attribution.py:45 in forward, code: q, k, v = self.qkv(x).split(d, dim=2)
        cat_3: "bf16[8, 128, 768]" = torch.ops.aten.cat.default([view_112, view_111, view_110], 2);  view_112 = view_111 = view_110 = None
        view_113: "bf16[1024, 768]" = torch.ops.aten.view.default(cat_3, [1024, 768]);  cat_3 = None
        mm_33: "bf16[1024, 256]" = torch.ops.aten.mm.default(view_113, permute_113);  permute_113 = None
        permute_114: "bf16[768, 1024]" = torch.ops.aten.permute.default(view_113, [1, 0])
        mm_34: "bf16[768, 256]" = torch.ops.aten.mm.default(permute_114, view);  permute_114 = view = None
        sum_48: "f32[1, 768]" = torch.ops.aten.sum.dim_IntList(view_113, [0], True, dtype = torch.float32);  view_113 = None
        view_114: "f32[768]" = torch.ops.aten.view.default(sum_48, [768]);  sum_48 = None
        view_115: "bf16[8, 128, 256]" = torch.ops.aten.view.default(mm_33, [8, 128, 256]);  mm_33 = None
        convert_element_type_243: "f32[8, 128, 256]" = torch.ops.prims.convert_element_type.default(view_115, torch.float32);  view_115 = None
        convert_element_type_244: "f32[768, 256]" = torch.ops.prims.convert_element_type.default(mm_34, torch.float32);  mm_34 = None
        convert_element_type_default: "f32[768]" = torch.ops.prims.convert_element_type.default(view_114, torch.float32);  view_114 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        mul_115: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_243, primals_4);  primals_4 = None
        mul_116: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_115, 256)
        sum_49: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_115, [2], True)

        # File: /work/main/scripts/gpu/record_attribution.py:84 in forward, code: x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        add: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(embedding, embedding_1);  embedding = embedding_1 = None

        # File: /work/main/scripts/gpu/record_attribution.py:70 in forward, code: x = x + self.attn(self.ln1(x))
        sub: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(add, getitem_1);  add = getitem_1 = None
        mul: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = None
        mul_117: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul_115, mul);  mul_115 = None
        sum_50: "f32[8, 128, 1]" = torch.ops.aten.sum.dim_IntList(mul_117, [2], True);  mul_117 = None
        mul_118: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(mul, sum_50);  sum_50 = None
        sub_34: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(mul_116, sum_49);  mul_116 = sum_49 = None
        sub_35: "f32[8, 128, 256]" = torch.ops.aten.sub.Tensor(sub_34, mul_118);  sub_34 = mul_118 = None
        div_8: "f32[8, 128, 1]" = torch.ops.aten.div.Tensor(rsqrt, 256);  rsqrt = None
        mul_119: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(div_8, sub_35);  div_8 = sub_35 = None
        mul_120: "f32[8, 128, 256]" = torch.ops.aten.mul.Tensor(convert_element_type_243, mul);  mul = None
        sum_51: "f32[256]" = torch.ops.aten.sum.dim_IntList(mul_120, [0, 1]);  mul_120 = None
        sum_52: "f32[256]" = torch.ops.aten.sum.dim_IntList(convert_element_type_243, [0, 1]);  convert_element_type_243 = None
        add_46: "f32[8, 128, 256]" = torch.ops.aten.add.Tensor(add_45, mul_119);  add_45 = mul_119 = None

        # File: /work/main/scripts/gpu/record_attribution.py:84 in forward, code: x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        sum_53: "f32[1, 128, 256]" = torch.ops.aten.sum.dim_IntList(add_46, [0], True, dtype = torch.float32)
        view_116: "f32[128, 256]" = torch.ops.aten.view.default(sum_53, [128, 256]);  sum_53 = None
        eq: "b8[128]" = torch.ops.aten.eq.Scalar(iota, -1)
        unsqueeze: "b8[128, 1]" = torch.ops.aten.unsqueeze.default(eq, -1);  eq = None
        full_default: "f32[]" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        where: "f32[128, 256]" = torch.ops.aten.where.self(unsqueeze, full_default, view_116);  unsqueeze = view_116 = None
        full_default_1: "f32[128, 256]" = torch.ops.aten.full.default([128, 256], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        index_put: "f32[128, 256]" = torch.ops.aten.index_put.default(full_default_1, [iota], where, True);  full_default_1 = iota = where = None
        eq_1: "b8[8, 128]" = torch.ops.aten.eq.Scalar(primals_2, -1)
        unsqueeze_1: "b8[8, 128, 1]" = torch.ops.aten.unsqueeze.default(eq_1, -1);  eq_1 = None
        where_1: "f32[8, 128, 256]" = torch.ops.aten.where.self(unsqueeze_1, full_default, add_46);  unsqueeze_1 = full_default = add_46 = None
        full_default_3: "f32[1024, 256]" = torch.ops.aten.full.default([1024, 256], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cuda', index=0), pin_memory = False)
        index_put_1: "f32[1024, 256]" = torch.ops.aten.index_put.default(full_default_3, [primals_2], where_1, True);  full_default_3 = primals_2 = where_1 = None
        return (index_put_1, None, index_put, sum_51, sum_52, convert_element_type_244, convert_element_type_default, convert_element_type_236, convert_element_type_default_1, sum_45, sum_46, convert_element_type_228, convert_element_type_default_2, convert_element_type_217, convert_element_type_default_3, sum_39, sum_40, convert_element_type_209, convert_element_type_default_4, convert_element_type_201, convert_element_type_default_5, sum_33, sum_34, convert_element_type_193, convert_element_type_default_6, convert_element_type_182, convert_element_type_default_7, sum_27, sum_28, convert_element_type_174, convert_element_type_default_8, convert_element_type_166, convert_element_type_default_9, sum_21, sum_22, convert_element_type_158, convert_element_type_default_10, convert_element_type_147, convert_element_type_default_11, sum_15, sum_16, convert_element_type_139, convert_element_type_default_12, convert_element_type_131, convert_element_type_default_13, sum_9, sum_10, convert_element_type_123, convert_element_type_default_14, convert_element_type_112, convert_element_type_default_15, sum_3, sum_4, convert_element_type_105)
