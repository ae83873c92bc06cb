class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[32]", primals_2: "f32[32]", primals_3: "f32[4, 16, 32]", primals_4: "f32[128, 32]", primals_5: "f32[128]", primals_6: "f32[32, 128]", primals_7: "f32[32]", primals_8: "f32[32]", primals_9: "f32[32]", primals_10: "f32[128, 32]", primals_11: "f32[128]", primals_12: "f32[32, 128]", primals_13: "f32[32]", primals_14: "f32[8, 32]", primals_15: "f32[8]"):
        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        var_mean = torch.ops.aten.var_mean.correction(primals_3, [2], correction = 0, keepdim = True)
        getitem: "f32[4, 16, 1]" = var_mean[0]
        getitem_1: "f32[4, 16, 1]" = var_mean[1];  var_mean = None
        add: "f32[4, 16, 1]" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[4, 16, 1]" = torch.ops.aten.rsqrt.default(add);  add = None
        sub: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(primals_3, getitem_1)
        mul: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = None
        mul_1: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(mul, primals_1);  mul = primals_1 = None
        add_1: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(mul_1, primals_2);  mul_1 = primals_2 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:25 in forward, code: return self.proj(nn.functional.gelu(self.fc(x)))
        view: "f32[64, 32]" = torch.ops.aten.view.default(add_1, [64, 32]);  add_1 = None
        permute: "f32[32, 128]" = torch.ops.aten.permute.default(primals_4, [1, 0])
        addmm: "f32[64, 128]" = torch.ops.aten.addmm.default(primals_5, view, permute);  primals_5 = permute = None
        view_1: "f32[4, 16, 128]" = torch.ops.aten.view.default(addmm, [4, 16, 128])
        mul_2: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_1, 0.5)
        mul_3: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_1, 0.7071067811865476);  view_1 = None
        erf: "f32[4, 16, 128]" = torch.ops.aten.erf.default(mul_3);  mul_3 = None
        add_2: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(erf, 1);  erf = None
        mul_4: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(mul_2, add_2);  mul_2 = add_2 = None
        view_2: "f32[64, 128]" = torch.ops.aten.view.default(mul_4, [64, 128]);  mul_4 = None
        permute_1: "f32[128, 32]" = torch.ops.aten.permute.default(primals_6, [1, 0])
        addmm_1: "f32[64, 32]" = torch.ops.aten.addmm.default(primals_7, view_2, permute_1);  primals_7 = permute_1 = None
        view_3: "f32[4, 16, 32]" = torch.ops.aten.view.default(addmm_1, [4, 16, 32])

        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        add_3: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(primals_3, view_3);  view_3 = None
        var_mean_1 = torch.ops.aten.var_mean.correction(add_3, [2], correction = 0, keepdim = True)
        getitem_2: "f32[4, 16, 1]" = var_mean_1[0]
        getitem_3: "f32[4, 16, 1]" = var_mean_1[1];  var_mean_1 = None
        add_4: "f32[4, 16, 1]" = torch.ops.aten.add.Tensor(getitem_2, 1e-05);  getitem_2 = None
        rsqrt_1: "f32[4, 16, 1]" = torch.ops.aten.rsqrt.default(add_4);  add_4 = None
        sub_1: "f32[4, 16, 32]" = torch.ops.aten.sub.Tensor(add_3, getitem_3)
        mul_5: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(sub_1, rsqrt_1);  sub_1 = None
        mul_6: "f32[4, 16, 32]" = torch.ops.aten.mul.Tensor(mul_5, primals_8);  mul_5 = None
        add_5: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(mul_6, primals_9);  mul_6 = primals_9 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:25 in forward, code: return self.proj(nn.functional.gelu(self.fc(x)))
        view_4: "f32[64, 32]" = torch.ops.aten.view.default(add_5, [64, 32]);  add_5 = None
        permute_2: "f32[32, 128]" = torch.ops.aten.permute.default(primals_10, [1, 0])
        addmm_2: "f32[64, 128]" = torch.ops.aten.addmm.default(primals_11, view_4, permute_2);  primals_11 = permute_2 = None
        view_5: "f32[4, 16, 128]" = torch.ops.aten.view.default(addmm_2, [4, 16, 128])
        mul_7: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_5, 0.5)
        mul_8: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(view_5, 0.7071067811865476);  view_5 = None
        erf_1: "f32[4, 16, 128]" = torch.ops.aten.erf.default(mul_8);  mul_8 = None
        add_6: "f32[4, 16, 128]" = torch.ops.aten.add.Tensor(erf_1, 1);  erf_1 = None
        mul_9: "f32[4, 16, 128]" = torch.ops.aten.mul.Tensor(mul_7, add_6);  mul_7 = add_6 = None
        view_6: "f32[64, 128]" = torch.ops.aten.view.default(mul_9, [64, 128]);  mul_9 = None
        permute_3: "f32[128, 32]" = torch.ops.aten.permute.default(primals_12, [1, 0])
        addmm_3: "f32[64, 32]" = torch.ops.aten.addmm.default(primals_13, view_6, permute_3);  primals_13 = permute_3 = None
        view_7: "f32[4, 16, 32]" = torch.ops.aten.view.default(addmm_3, [4, 16, 32]);  addmm_3 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:35 in forward, code: return x + self.mlp(self.ln(x))
        add_7: "f32[4, 16, 32]" = torch.ops.aten.add.Tensor(add_3, view_7);  add_3 = view_7 = None

        # File: /work/wt/compile/scripts/compile_info_cpu.py:47 in forward, code: return self.head(x).relu().sum()
        view_8: "f32[64, 32]" = torch.ops.aten.view.default(add_7, [64, 32]);  add_7 = None
        permute_4: "f32[32, 8]" = torch.ops.aten.permute.default(primals_14, [1, 0])
        addmm_4: "f32[64, 8]" = torch.ops.aten.addmm.default(primals_15, view_8, permute_4);  primals_15 = permute_4 = None
        view_9: "f32[4, 16, 8]" = torch.ops.aten.view.default(addmm_4, [4, 16, 8]);  addmm_4 = None
        relu: "f32[4, 16, 8]" = torch.ops.aten.relu.default(view_9);  view_9 = None
        sum_1: "f32[]" = torch.ops.aten.sum.default(relu)
        le: "b8[4, 16, 8]" = torch.ops.aten.le.Scalar(relu, 0);  relu = None
        return (sum_1, primals_3, primals_4, primals_6, primals_8, primals_10, primals_12, primals_14, getitem_1, rsqrt, view, addmm, view_2, addmm_1, getitem_3, rsqrt_1, view_4, addmm_2, view_6, view_8, le)
